#!/usr/bin/env python3
"""The plan is what apply does (issue 18 B): what a reviewed plan lists, and what apply did.

    contract.py expect SUMMARY PLAN_DIR PREV     the actions `mlenvc plan --format=json` lists
                                                 (PREV: the plan directory before it)
    contract.py expect-destroy PLAN_DIR UNIT     the actions `mlenvc destroy ENV` takes
    contract.py observe kube LOG STATE REPLIES   what recorded oc/kubectl/podman calls did
    contract.py observe slurm LOG STATE          what recorded sbatch/scancel calls did
    contract.py observe local BEFORE AFTER       what an apply did to local sessions (snapshots)
    contract.py snapshot PLAN_DIR                the running sessions of every local env

Every command prints one action a line, sorted: `create|update|replace|delete ADDRESS`,
`roll ADDRESS` (a StatefulSet's pods restart) and `build IMAGE` (an image is built: IMAGE is
`<cluster>/_shared/Image/<name>` where the envs that run one image share it, else the unit). The
test diffs the two lists: an action apply took that the plan did not list, or one the plan
listed that apply did not take, fails.

Each change of the plan implies (`expect`):
  create/update/delete ADDRESS     the same action on that object (or the run of an env with no
                                   objects: SlurmJob, LocalRun)
  replace ADDRESS                  `replace ADDRESS`: deleted, then created again
  a note `rolls the pods...`       `roll ADDRESS` as well
  Dockerfile or _runtime/ changed  `build IMAGE` of each env whose plan.json builds its image
                                   (a new env's Dockerfile: only when no env of its cluster ran
                                   that image before); one build per image, however many envs
                                   run it (a second build of one image is `build-again IMAGE`)
  boot.json created or deleted     the env's Secrets (plan.json `secrets`) created or deleted

What apply did (`observe`) is read from the recorded client calls against a model of the
cluster kept in STATE (JSON) between applies: a server-side apply of an object the model lacks
creates it, of other bytes updates it (and rolls a StatefulSet's pods when its pod template
differs), of the same bytes does nothing; a delete of an object the model holds deletes it; a
delete and a create of one object in one apply is a replace. The ApplySet parent ConfigMap is
apply's own bookkeeping (as the git record is) and not an action. REPLIES is rewritten for the
next apply so that the stand-in answers `get secret` as the model's cluster would.
"""

import hashlib
import json
import os
import re
import sys

BUILD_ACTIONS = ("build", "push")
# The kinds of an image's shared objects, which go with the last env that runs the image
# (Provider::is_image_kind); the cluster's other shared objects stay when an env leaves.
IMAGE_KINDS = ("BuildConfig", "ImageStream")
RUN_OF_ACTION = {"submit": "SlurmJob", "start": "LocalRun"}


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def plan_json(plan_dir, unit):
    path = os.path.join(plan_dir, unit, "plan.json")
    return load_json(path) if os.path.exists(path) else None


def builds_image(manifest):
    # A cluster's build or a push, or a job or local run whose image apply builds (`dockerfile`).
    return manifest is not None and any(
        a.get("action") in BUILD_ACTIONS or a.get("dockerfile")
        for a in manifest.get("actions", []))


def image_of(manifest):
    """The image a kube env's build or push action names, or a Slurm job's that apply builds
    (`submit` with a `dockerfile`): the envs that run one image share it. Else None."""
    for a in (manifest or {}).get("actions", []):
        if a.get("action") in BUILD_ACTIONS or (a.get("action") == "submit" and a.get("dockerfile")):
            return a["image"]
    return None


def image_address(cluster, image):
    """`<cluster>/_shared/Image/<name>`: name is the last part of the image's repository."""
    repository = image.split("@")[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return f"{cluster}/_shared/Image/{repository.rsplit('/', 1)[-1]}"


def image_key(manifest, unit):
    """What `build` names for the unit: its shared image (kube), or the unit itself."""
    image = image_of(manifest)
    return image_address(unit.split("/")[0], image) if image else unit


def cluster_ran(plan_dir, cluster, image):
    """Whether an env of `cluster` in PLAN_DIR ran `image`."""
    root = os.path.join(plan_dir, cluster)
    if not os.path.isdir(root):
        return False
    return any(image_of(plan_json(plan_dir, f"{cluster}/{env}")) == image
               for env in os.listdir(root))


def expect(summary_path, plan_dir, prev_dir):
    summary = load_json(summary_path)
    out = set()
    for change in summary["changes"]:
        address, action = change["address"], change["action"]
        if action == "keep":  # a claim apply leaves as it is, with its data
            continue
        if address.split("/")[1:3] == ["_shared", "Image"]:  # `+|~ ..._shared/Image/<name>`
            out.add(f"build {address}")
            continue
        if address.split("/")[2:3] == ["Image"]:  # `~ <env>/Image/<name>`: rebuild image
            out.add("build " + "/".join(address.split("/")[:2]))
            continue
        out.add(f"{action} {address}")
        if any(n.startswith("rolls the pods") for n in change.get("notes", [])):
            out.add(f"roll {address}")
    runtime = any(f["path"].startswith("_runtime/") for f in summary["files"])
    units = {os.path.dirname(f["path"]) for f in summary["files"]}
    units |= {"/".join(c["address"].split("/")[:2]) for c in summary["changes"]}
    for unit in sorted(u for u in units if u.count("/") == 1 and "/_" not in "/" + u):
        manifest = plan_json(plan_dir, unit)
        files = {f["path"]: f["action"] for f in summary["files"] if f["path"].startswith(unit + "/")}
        dockerfile = files.get(unit + "/Dockerfile")
        image = image_of(manifest)
        if dockerfile == "create" and image and cluster_ran(prev_dir, unit.split("/")[0], image):
            dockerfile = None  # a new env of an image already built builds nothing
        if builds_image(manifest) and (dockerfile in ("create", "update") or runtime):
            out.add(f"build {image_key(manifest, unit)}")
        boot = files.get(unit + "/boot.json")
        if boot in ("create", "delete"):
            was = manifest if boot == "create" else plan_json(prev_dir, unit)
            for secret in (was or {}).get("secrets", []):
                out.add(f"{boot} {unit}/Secret/{secret['name']}")
    return out


def shared_elsewhere(plan_dir, unit):
    """The addresses of the shared objects the other envs of `unit`'s cluster hold."""
    cluster = unit.split("/")[0]
    out = set()
    for env in os.listdir(os.path.join(plan_dir, cluster)):
        other = plan_json(plan_dir, f"{cluster}/{env}")
        if other is not None and f"{cluster}/{env}" != unit:
            out |= {o["address"] for o in other.get("objects", []) if o.get("shared")}
    return out


def expect_destroy(plan_dir, unit):
    manifest = plan_json(plan_dir, unit)
    kept = shared_elsewhere(plan_dir, unit)  # another env still uses them (its image)
    out = set()
    for obj in manifest.get("objects", []):
        # Admin objects are the platform team's; claims are kept with their data unless
        # --allow-destroy names them (issue 18 C).
        if obj.get("admin") or obj.get("kind") == "PersistentVolumeClaim":
            continue
        if obj.get("shared") and (obj["address"] in kept or obj.get("kind") not in IMAGE_KINDS):
            continue
        cluster = unit.split("/")[0]
        where = f"{cluster}/_shared" if obj.get("shared") else unit
        out.add(f"delete {where}/{obj['address']}")
    for secret in manifest.get("secrets", []):
        out.add(f"delete {unit}/Secret/{secret['name']}")
    for action in manifest.get("actions", []):
        kind = RUN_OF_ACTION.get(action.get("action"))
        if kind:
            out.add(f"delete {unit}/{kind}/{manifest['env']}")
    return out


# --- The recorded calls: `argv: NAME ARGS...`, then `stdin: ...` for `-f -` (fake_kubectl.sh).


def calls(log_path):
    if not os.path.exists(log_path):
        return []
    out = []
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("argv: "):
                out.append({"argv": line[6:].split(" "), "stdin": ""})
            elif line.startswith("stdin: ") and out:
                out[-1]["stdin"] = line[7:]
    return out


def kind_matches(resource, kind):
    """Whether kubectl's resource (`statefulsets.apps`) names objects of `kind`."""
    plural = resource.split(".")[0].replace("-", "")
    k = kind.lower()
    return plural in (k, k + "s", k + "es", k[:-1] + "ies")


def template_digest(obj):
    template = obj.get("spec", {}).get("template")
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()


class KubeModel:
    """The objects a cluster holds, by `Kind/name`, with their bytes and owning unit."""

    def __init__(self, state):
        self.objects = state.get("objects", {})
        self.actions = []  # (verb, key)

    def key_of(self, kind, name):
        return f"{kind}/{name}"

    def apply(self, obj):
        kind, name = obj["kind"], obj["metadata"]["name"]
        labels = obj["metadata"].get("labels", {})
        key = self.key_of(kind, name)
        text = json.dumps(obj, sort_keys=True)
        old = self.objects.get(key)
        entry = {"json": text, "template": template_digest(obj)}
        if kind == "ConfigMap" and "applyset.k8s.io/id" in labels:
            self.objects[key] = entry  # the ApplySet parent: apply's bookkeeping
            return
        if old is None:
            self.actions.append(("create", key))
        elif old["json"] != text:
            self.actions.append(("update", key))
            if kind == "StatefulSet" and old["template"] != entry["template"]:
                self.actions.append(("roll", key))
        self.objects[key] = entry

    def delete(self, resource, name):
        for key in list(self.objects):
            kind, _, kname = key.partition("/")
            if kname == name and kind_matches(resource, kind):
                parent = json.loads(self.objects[key]["json"]).get("metadata", {}).get(
                    "labels", {}).get("applyset.k8s.io/id")
                del self.objects[key]
                if not parent:
                    self.actions.append(("delete", key))

    def create_secret(self, name):
        key = self.key_of("Secret", name)
        if key in self.objects:
            self.actions.append(("create-existing", key))
        self.objects[key] = {"json": "{}", "template": ""}
        self.actions.append(("create", key))


def delete_target(args):
    """The resource and name of `delete RESOURCE NAME ...` or `delete RESOURCE -l .. --field-selector
    metadata.name=NAME`."""
    resource = args[1]
    for i, a in enumerate(args):
        if a == "--field-selector":
            return resource, args[i + 1].split("=", 1)[1]
    return resource, args[2]


def collapse(actions):
    """A delete and a create of one key in one apply is a replace."""
    verbs = {}
    for verb, key in actions:
        verbs.setdefault(key, []).append(verb)
    out = []
    for key, vs in verbs.items():
        if "delete" in vs and "create" in vs:
            out.append(("replace", key))
            vs = [v for v in vs if v not in ("delete", "create")]
        out.extend((v, key) for v in vs)
    return out


def observe_kube(log_path, state_path, replies_path, addresses):
    state = load_json(state_path) if os.path.exists(state_path) else {}
    model = KubeModel(state)
    builds = []
    for call in calls(log_path):
        argv = call["argv"]
        tool, args = argv[0], argv[1:]
        if tool in ("podman", "buildah", "docker"):
            if args and args[0] == "build":
                builds.append(("image", args[args.index("-t") + 1]))
            continue
        if not args:
            continue
        if args[0] == "apply" and call["stdin"]:
            model.apply(json.loads(call["stdin"]))
        elif args[0] == "delete":
            model.delete(*delete_target(args))
        elif args[:3] == ["create", "secret", "generic"]:
            model.create_secret(args[3])
        elif args[0] == "start-build":
            builds.append(("build_config", args[1]))
    out = set()
    for verb, key in collapse(model.actions):
        out.add(f"{verb} {addresses.get(key, '?/?/' + key)}")
    for i, (what, name) in enumerate(builds):
        again = "build-again" if (what, name) in builds[:i] else "build"
        out.add(f"{again} {addresses.get(('build', what, name), '?' + name)}")
    state["objects"] = model.objects
    with open(state_path, "w", encoding="utf-8") as f:
        json.dump(state, f)
    write_replies(replies_path, model.objects)
    return out


def write_replies(replies_path, objects):
    """The static answers (the namespace exists, grants are given) and each Secret it holds."""
    lines = []
    if os.path.exists(replies_path):
        with open(replies_path, encoding="utf-8") as f:
            lines = [l for l in f.read().splitlines() if not l.startswith("get secret ")]
    for key in sorted(objects):
        kind, _, name = key.partition("/")
        if kind == "Secret":
            lines.append(f"get secret {name} |0|secret/{name}")
    with open(replies_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def plan_addresses(plan_dir, state):
    """Maps the model's keys to the plan's addresses, from every plan.json in PLAN_DIR and those
    seen before (STATE keeps them: an env that left the plan is still named)."""
    known = state.get("addresses", {})
    for root, _, files in os.walk(plan_dir):
        if "plan.json" not in files:
            continue
        manifest = load_json(os.path.join(root, "plan.json"))
        unit = f"{manifest['cluster']}/{manifest['env']}"
        for obj in manifest.get("objects", []):
            where = f"{manifest['cluster']}/_shared" if obj.get("shared") else unit
            known[f"{obj['kind']}/{obj['name']}"] = f"{where}/{obj['address']}"
        for secret in manifest.get("secrets", []):
            known[f"Secret/{secret['name']}"] = f"{unit}/Secret/{secret['name']}"
        for action in manifest.get("actions", []):
            if action.get("action") == "build":
                known[f"build|build_config|{action['build_config']}"] = image_key(manifest, unit)
            elif action.get("action") == "push":
                known[f"build|image|{action['image']}"] = image_key(manifest, unit)
    state["addresses"] = known
    out = dict(known)
    for key, unit in known.items():
        if key.startswith("build|"):
            _, what, name = key.split("|", 2)
            out[("build", what, name)] = unit
    return out


# --- Slurm: `sbatch --parsable --chdir=DIR SCRIPT` answers a job id; `scancel -- ID`.


def observe_slurm(log_path, state_path):
    state = load_json(state_path) if os.path.exists(state_path) else {}
    jobs = state.setdefault("jobs", {})  # id -> unit
    next_id = state.get("next_id", 1000)
    seen = []
    builds = []
    for call in calls(log_path):
        argv = call["argv"]
        if argv[0] == "sbatch":
            chdir = next(a for a in argv if a.startswith("--chdir="))[len("--chdir="):]
            unit = "/".join(chdir.rstrip("/").split("/")[-2:])
            jobs[str(next_id)] = unit
            next_id += 1
            seen.append(("create", unit))
        elif argv[0] == "scancel":
            unit = jobs.get(argv[-1], "?")
            seen.append(("delete", unit))
        elif argv[0] in ("podman", "buildah", "docker") and argv[1:2] == ["build"]:
            dockerfile = argv[argv.index("-f") + 1]
            image = argv[argv.index("-t") + 1]
            builds.append(image_address(dockerfile.split("/")[-3], image))
    state["next_id"] = next_id
    with open(state_path, "w", encoding="utf-8") as f:
        json.dump(state, f)
    out = {f"{verb} {unit}/SlurmJob/{unit.split('/')[1]}" for verb, unit in collapse(seen)}
    return out | {("build-again " if b in builds[:i] else "build ") + b
                  for i, b in enumerate(builds)}


# --- Local: the sessions of each env's nodes before and after an apply.


def session_running(sid):
    """Whether any process of session `sid` still runs (a zombie has ended)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            return True
    return False


def snapshot(plan_dir):
    out = {}
    for root, dirs, files in os.walk(plan_dir):
        if os.path.basename(root) != "run":
            continue
        unit = "/".join(os.path.relpath(os.path.dirname(root), plan_dir).split("/")[-2:])
        for name in sorted(files):
            m = re.fullmatch(r"rank-(\d+)\.pid", name)
            if not m:
                continue
            with open(os.path.join(root, name), encoding="utf-8") as f:
                sid = int(f.read().split()[0])
            if session_running(sid):
                out.setdefault(unit, []).append(sid)
    return out


def observe_local(before_path, after_path):
    before, after = load_json(before_path), load_json(after_path)
    seen = []
    for unit in sorted(set(before) | set(after)):
        old, new = set(before.get(unit, [])), set(after.get(unit, []))
        if old - new:
            seen.append(("delete", unit))
        if new - old:
            seen.append(("create", unit))
        if (old & new) and (old ^ new):
            seen.append(("left-running", unit))  # a node of the old run beside the new
    return {f"{verb} {unit}/LocalRun/{unit.split('/')[1]}" for verb, unit in collapse(seen)}


def main(argv):
    cmd = argv[1]
    if cmd == "expect":
        out = expect(argv[2], argv[3], argv[4])
    elif cmd == "expect-destroy":
        out = expect_destroy(argv[2], argv[3])
    elif cmd == "observe" and argv[2] == "kube":
        log, state_path, replies, plan_dir = argv[3:7]
        state = load_json(state_path) if os.path.exists(state_path) else {}
        addresses = plan_addresses(plan_dir, state)
        with open(state_path, "w", encoding="utf-8") as f:
            json.dump(state, f)
        out = observe_kube(log, state_path, replies, addresses)
    elif cmd == "observe" and argv[2] == "slurm":
        out = observe_slurm(argv[3], argv[4])
    elif cmd == "observe" and argv[2] == "local":
        out = observe_local(argv[3], argv[4])
    elif cmd == "snapshot":
        print(json.dumps(snapshot(argv[2])))
        return 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for line in sorted(out):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
