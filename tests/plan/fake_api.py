#!/usr/bin/env python3
"""The API server and the webhooks behind tests/plan/fake_kubectl.sh, when $MLENV_FAKE_STATE names
a JSON file: the objects the cluster holds, by `Kind/namespace/name`, each with the fields every
field manager owns. It answers the calls that change the cluster as the server would and
refuses what the server or a webhook refuses, each rule below naming its upstream source.

    fake_api.py STDIN_FILE ARGS...    (ARGS: the client's arguments; STDIN_FILE: `-f -` input)

Exit 0: accepted (or not a call it models: the stand-in answers it as before); 1 with the
server's message on stderr: refused.
"""

import json
import os
import sys

KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
KUEUE_PRIORITY = "kueue.x-k8s.io/priority-class"


def load(path):
    if not os.path.exists(path):
        return {"objects": {}}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def save(path, state):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(state, f, sort_keys=True)


def leaves(value, path=""):
    """Every field the object sets, `.a.b` -> value. Lists count as one field (an atomic list):
    server-side apply merges lists by key where the schema says so, which this never needs."""
    if isinstance(value, dict) and value:
        out = {}
        for key, child in value.items():
            out.update(leaves(child, f"{path}.{key}"))
        return out
    return {path: value}


def at(obj, *keys):
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def option(args, name):
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def key_of(obj, namespace):
    meta = obj.get("metadata", {})
    return f"{obj['kind']}/{meta.get('namespace', namespace or '')}/{meta['name']}"


def refuse(message):
    print(message, file=sys.stderr)
    return 1


# --- What the API server and the webhooks refuse of an update of `old` to `new`.


def immutable(old, new, *path):
    return at(old, *path) != at(new, *path)


def job_update(old, new, name):
    # kubernetes pkg/apis/batch/validation/validation.go, ValidateJobSpecUpdate: completions,
    # selector, completionMode and (validatePodTemplateUpdate) the pod template of a Job that is
    # not suspended are immutable.
    for field in ("template", "completions", "completionMode"):
        if immutable(old, new, "spec", field):
            return (f'The Job "{name}" is invalid: spec.{field}: Invalid value: "[omitted]": '
                    "field is immutable")
    return None


def jobset_update(old, new, name):
    # kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go, ValidateUpdate: spec.replicatedJobs
    # is immutable (a suspended JobSet's pod scheduling fields aside, which mlenvc never sets).
    if immutable(old, new, "spec", "replicatedJobs"):
        return ('admission webhook "vjobset.kb.io" denied the request: spec.replicatedJobs: '
                f'Invalid value: "{name}": field is immutable')
    return None


def kueue_update(old, new, name):
    # kubernetes-sigs/kueue pkg/controller/jobframework/validation.go, validateUpdateForQueueName:
    # the queue-name label of a job that is not suspended is immutable; and
    # validateUpdateForWorkloadPriorityClassName: so is its priority-class label once a Workload
    # was admitted (a job Kueue let run).
    suspended = at(new, "spec", "suspend") is True
    for label in (KUEUE_QUEUE, KUEUE_PRIORITY):
        before = at(old, "metadata", "labels", label)
        after = at(new, "metadata", "labels", label)
        if before != after and not suspended and before is not None:
            return (f'admission webhook "vjobset.kb.io" denied the request: '
                    f"metadata.labels[{label}]: Invalid value: \"{after}\": field is immutable")
    return None


def claim_update(old, new, name):
    # kubernetes pkg/apis/core/validation/validation.go, ValidatePersistentVolumeClaimUpdate: a
    # bound claim's spec is immutable but for its requested size, which may only grow.
    def size(obj):
        return quantity(at(obj, "spec", "resources", "requests", "storage"))
    if size(new) is not None and size(old) is not None and size(new) < size(old):
        return (f'PersistentVolumeClaim "{name}" is invalid: spec.resources.requests.storage: '
                "Forbidden: field can not be less than previous value")
    return None


def statefulset_update(old, new, name):
    # kubernetes pkg/apis/apps/validation/validation.go, ValidateStatefulSetUpdate: only these
    # fields of a StatefulSet's spec may change; volumeClaimTemplates never do.
    mutable = {"replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
               "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}
    before = {k: v for k, v in (old.get("spec") or {}).items() if k not in mutable}
    after = {k: v for k, v in (new.get("spec") or {}).items() if k not in mutable}
    if before != after:
        return (f'StatefulSet.apps "{name}" is invalid: spec: Forbidden: updates to statefulset '
                "spec for fields other than 'replicas', 'ordinals', 'template', "
                "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
                "are forbidden")
    return None


UPDATE_RULES = {
    "Job": [job_update, kueue_update],
    "JobSet": [jobset_update, kueue_update],
    "PersistentVolumeClaim": [claim_update],
    "StatefulSet": [statefulset_update],
}


def quantity(text):
    if text is None:
        return None
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    text = str(text)
    for unit, factor in units.items():
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)


# --- Server-side apply.


def conflicts(entry, manager, fields):
    """Fields another manager owns with another value. Server-side apply: "Any subsequent
    attempt to change the value of the shared field, by any of the appliers, results in a
    conflict" (kubernetes.io/docs/reference/using-api/server-side-apply, Conflicts;
    sigs.k8s.io/structured-merge-diff merge/update.go, Updater.Apply)."""
    out = []
    for other, owned in entry["managers"].items():
        if other == manager:
            continue
        for path in owned:
            if path in fields and entry["fields"].get(path) != fields[path]:
                out.append((other, path))
    return out


def rebuild(fields):
    obj = {}
    for path, value in fields.items():
        keys = path.strip(".").split(".")
        node = obj
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return obj


def server_side_apply(state, args, stdin_file):
    with open(stdin_file, encoding="utf-8") as f:
        text = f.read()
    try:
        obj = json.loads(text)
    except ValueError:
        return 0  # YAML or a list: not modelled
    manager = option(args, "--field-manager") or "kubectl"
    force = "--force-conflicts" in args
    key = key_of(obj, option(args, "-n"))
    fields = {p: v for p, v in leaves(obj).items() if not p.startswith(".status")}
    entry = state["objects"].get(key)
    if entry is None:
        if obj["kind"] in ("Job", "JobSet") and at(obj, "metadata", "labels", KUEUE_QUEUE):
            # Kueue's webhook suspends a queued job at creation (jobframework, ApplyDefaultForSuspend)
            # until its Workload is admitted.
            fields[".spec.suspend"] = True
        state["objects"][key] = {"fields": fields, "managers": {manager: sorted(fields)}}
        return 0
    found = conflicts(entry, manager, fields)
    if found and not force:
        lines = [f'conflict with "{m}": {p}' for m, p in found]
        return refuse(f"error: Apply failed with {len(found)} conflict"
                      f"{'s' if len(found) > 1 else ''}: " + "; ".join(lines))
    merged = dict(entry["fields"])
    mine = set(entry["managers"].get(manager, []))
    others = set()
    for other, owned in entry["managers"].items():
        if other != manager:
            others |= set(owned) - ({p for _, p in found} if force else set())
    for path in mine - set(fields) - others:
        merged.pop(path, None)  # a field the manager no longer applies, and nobody else owns
    merged.update(fields)
    old, new = rebuild(entry["fields"]), rebuild(merged)
    for rule in UPDATE_RULES.get(obj["kind"], []):
        message = rule(old, new, obj["metadata"]["name"])
        if message:
            return refuse(f"Error from server (Invalid): {message}")
    entry["fields"] = merged
    entry["managers"][manager] = sorted(fields)
    if force:
        for other in entry["managers"]:
            if other != manager:
                entry["managers"][other] = [p for p in entry["managers"][other] if p not in fields]
    return 0


# --- Deletes and reads by resource name.


def kind_matches(resource, kind):
    plural = resource.split(".")[0].replace("-", "")
    k = kind.lower()
    return plural in (k, k + "s", k + "es", k[:-1] + "ies")


def delete(state, args):
    resource = args[1]
    name = option(args, "--field-selector")
    name = name.split("=", 1)[1] if name else args[2]
    namespace = option(args, "-n") or ""
    for key in list(state["objects"]):
        kind, ns, kname = key.split("/", 2)
        if kname == name and kind_matches(resource, kind) and ns in (namespace, ""):
            del state["objects"][key]
    return 0


def main(argv):
    path = os.environ["MLENV_FAKE_STATE"]
    stdin_file, args = argv[1], argv[2:]
    state = load(path)
    status = 0
    if args[:2] == ["apply", "--server-side"] and stdin_file:
        status = server_side_apply(state, args, stdin_file)
    elif args[:1] == ["delete"] and len(args) > 2:
        status = delete(state, args)
    save(path, state)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
