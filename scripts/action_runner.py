"""Runs a composite GitHub Action's steps locally, as a runner would: `run:` steps with
bash and their `env:` (the `${{ ... }}` expressions of the kinds action.yml uses
evaluated), `uses:` steps stood in for (actions/cache: nothing restored;
github/codeql-action/upload-sarif: the log must exist and be SARIF 2.1.0). Used by
scripts/test-action.sh and scripts/test-readme-ci.sh."""
import json
import os
import re
import subprocess
import sys
import time

import yaml


def load(action_dir):
    with open(os.path.join(action_dir, "action.yml")) as f:
        action = yaml.safe_load(f)
    assert action["runs"]["using"] == "composite", action["runs"]
    return action


def expression(text, inputs, outputs, work=""):
    """Evaluate a GitHub expression of the small kind action.yml uses."""
    expr = text.strip()
    expr = re.sub(r"\binputs\.([A-Za-z0-9_-]+)", lambda m: repr(inputs[m.group(1)]), expr)
    expr = re.sub(
        r"\bsteps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)",
        lambda m: repr(outputs.get(m.group(1), {}).get(m.group(2), "")),
        expr,
    )
    expr = expr.replace("runner.temp", repr(work))
    expr = expr.replace("!cancelled()", "True").replace("always()", "True")
    expr = expr.replace("&&", " and ").replace("||", " or ").replace("!=", " != ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    return eval(expr, {"__builtins__": {}}, {"True": True})


def substitute(value, inputs, outputs, work=""):
    return re.sub(
        r"\$\{\{(.*?)\}\}",
        lambda m: str(expression(m.group(1), inputs, outputs, work)),
        str(value),
    )


def run_action(action_dir, project, given, work):
    """Run the action in `action_dir` in `project` with inputs `given`, HOME being
    `work`: the steps' outputs, `_validate` the validate step's process."""
    action = load(action_dir)
    steps = action["runs"]["steps"]
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs.update(given)
    outputs = {}
    failed = None
    for step in steps:
        cond = step.get("if")
        if cond is not None:
            cond = cond.strip()
            if cond.startswith("${{"):
                cond = cond[3:-2]
            if not expression(cond, inputs, outputs, work):
                continue
            # Steps after a failed one run only when their condition says so.
        elif failed is not None:
            continue
        name = step.get("name", step.get("uses", step.get("run")))
        if "uses" in step:
            with_ = {k: substitute(v, inputs, outputs, work) for k, v in step.get("with", {}).items()}
            if step["uses"].startswith("actions/cache@"):
                assert with_["key"].startswith("agent-presets-"), with_
                print(f"   [{name}] cache key {with_['key']}: nothing restored")
            else:
                path = os.path.join(project, with_["sarif_file"])
                with open(path) as f:
                    log = json.load(f)
                assert log["version"] == "2.1.0", log.get("version")
                print(f"   [{name}] would upload {with_['sarif_file']}: {len(log['runs'][0]['results'])} results")
                outputs.setdefault("upload", {})["done"] = "true"
            continue
        env = dict(os.environ)
        env.update({k: substitute(v, inputs, outputs, work) for k, v in step.get("env", {}).items()})
        out_file = os.path.join(work, "github_output")
        open(out_file, "w").close()
        # HOME is a fresh directory, as on a runner (the toolchain stays where it is).
        env.setdefault("RUSTUP_HOME", os.path.join(os.path.expanduser("~"), ".rustup"))
        env.setdefault("CARGO_HOME", os.path.join(os.path.expanduser("~"), ".cargo"))
        env.update(GITHUB_ACTION_PATH=action_dir, GITHUB_OUTPUT=out_file, HOME=work)
        for k in ("AGENT_PRESETS_ROOT", "AGENT_PRESETS_BIN"):
            env.pop(k, None)
        # A runner's `shell: bash`: bash --noprofile --norc -eo pipefail {0}.
        assert step.get("shell") == "bash", step
        start = time.time()
        p = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=project, env=env, capture_output=True, text=True,
        )
        seconds = time.time() - start
        step_outputs = {}
        with open(out_file) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    step_outputs[k] = v
        if "id" in step:
            outputs[step["id"]] = step_outputs
        print(f"   [{name}] exit {p.returncode} ({seconds:.1f} s)")
        if step.get("id") == "validate":
            outputs["_validate"] = p
        elif p.returncode != 0:
            sys.exit(f"step {name!r} failed:\n{p.stdout}\n{p.stderr}")
        if p.returncode != 0:
            failed = name
    return outputs
