# Shared steps of the "apply did exactly what the plan listed" tests (issue 18 B), sourced by
# tests/contract/kube.sh, tests/slurm/contract.sh and tests/local/contract.sh. A scenario is:
#   contract_edit 'sed expression' "what changed"   (edits program.mlenv and commits)
#   contract_plan                                   (mlenvc plan, and the actions it lists)
#   contract_apply [ARGS]                           (apply; what it did must be what was listed)
# or contract_destroy ENV [ARGS]. contract.py says how a listed change maps to actions.
# The caller sets: mlenvc, contract_platform (kube, slurm or local), and for kube
# MLENV_FAKE_LOG, MLENV_FAKE_REPLIES with the stand-ins on PATH; it defines contract_run (how
# to run mlenvc with the platform's clients).
contract_py="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/contract.py"
contract_step=0

contract_fail() {
  echo "FAIL ($contract_what): $*" >&2
  exit 1
}

# A git work tree in $1 holding program.mlenv from the template $2 (sed expressions in $3).
contract_init() {
  cd "$1"
  git init -q -b main . && git config user.name mlenv && git config user.email mlenv@localhost
  sed -e "${3:-}" "$2" > program.mlenv
  git add program.mlenv && git commit -qm "program"
  contract_what="create"
}

contract_edit() {
  sed -i -e "$1" program.mlenv
  git diff --quiet program.mlenv && contract_fail "the edit '$1' changed nothing"
  contract_what=$2
  git commit -qam "$2"
}

# `mlenvc plan`, its JSON summary, and the actions it lists (expected.txt).
contract_plan() {
  contract_step=$((contract_step + 1))
  rm -rf prev && mkdir prev
  [ ! -d plans ] || (cd plans && find . -name plan.json -exec cp --parents {} ../prev \;)
  "$mlenvc" plan program.mlenv --format=json > summary.json 2> plan.err ||
    { cat plan.err; contract_fail "plan failed"; }
  python3 "$contract_py" expect summary.json plans prev > expected.txt
}

# Runs apply (or destroy) and compares what it did with expected.txt.
contract_compare() {
  if ! diff -u expected.txt observed.txt > contract.diff; then
    echo "--- the plan listed (-), apply did (+):" >&2
    cat contract.diff >&2
    contract_fail "apply did not do exactly what the plan listed"
  fi
  echo "ok $contract_step $contract_what: $(tr '\n' ';' < expected.txt)"
}

contract_apply() {
  contract_observe contract_run apply "$@"
}

contract_destroy() {
  local env=$1
  shift
  contract_step=$((contract_step + 1))
  contract_what="destroy $env"
  python3 "$contract_py" expect-destroy plans "$(cd plans && echo */"$env")" > expected.txt
  contract_observe contract_run destroy "$env" "$@"
}

# Runs "$@" and writes observed.txt: what it did, read from the recorded calls (kube, slurm)
# or the sessions before and after (local).
contract_observe() {
  case $contract_platform in
    local) python3 "$contract_py" snapshot plans > before.json ;;
    *) : > "$MLENV_FAKE_LOG" ;;
  esac
  "$@" > apply.out 2>&1 || { cat apply.out; contract_fail "$2 failed"; }
  case $contract_platform in
    kube) python3 "$contract_py" observe kube "$MLENV_FAKE_LOG" state.json "$MLENV_FAKE_REPLIES" \
            plans > observed.txt ;;
    slurm) python3 "$contract_py" observe slurm "$MLENV_FAKE_LOG" state.json > observed.txt ;;
    local) python3 "$contract_py" snapshot plans > after.json
           python3 "$contract_py" observe local before.json after.json > observed.txt ;;
  esac
  contract_compare
}
