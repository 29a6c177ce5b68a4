#!/usr/bin/env python3
"""Build the fuzz corpora (fuzz/corpus/<target>/) from the committed seeds and the
repository's test fixtures. Idempotent: files are named by content hash, so running it
again over a corpus the fuzzer has grown only adds what is missing.

    python3 fuzz/seeds.py

- preset_validate: fuzz/seeds/preset_validate/*, every preset file under presets/ and
  tests/cli/validate/*/ alone, and each validate case's files bundled into one input
  (`#>> NAME` lines start the second and later files).
- template_render: fuzz/seeds/template_render/*, and (with PyYAML) every section text,
  `when` and context of tests/conformance/core/*.yaml and presets/**/*.yaml, as
  `TEXT \\0 WHEN \\0 CONTEXT`.
- stream_parse: fuzz/seeds/stream_parse/* (recorded OpenAI-style and Anthropic events).
- tool_pattern: fuzz/seeds/tool_pattern/* (`PATTERN \0 NAME`), and (with PyYAML) every
  `allow` / `deny` entry of presets/**/*.yaml against every built-in tool name.
- tool_call: fuzz/seeds/tool_call/* (a tool-selector byte, then JSON arguments).
- sse_stream: every event-stream body in fuzz/seeds/sse_stream/* (the name's `anthropic`
  picks the dialect) and every fuzz/seeds/stream_parse/* stream framed as SSE, each
  with LF, CRLF and CR line ends, with and without a BOM, comments and `id:` lines,
  behind headers that split it at no point, inside every CRLF, inside UTF-8 sequences
  and byte by byte, under several small line limits.
- redact: keys (long and short, with `+/=`, `%`-worthy and non-ASCII characters) and
  users from REDACT_CASES, each form of the key planted once in ordinary text, split
  across pushes at several points, and all forms planted together.
- every target: fuzz/regressions/<target>/*, the inputs that once failed (each is also a
  test in tests/integration/fuzz_regressions.rs).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS = HERE / "corpus"


def put(target: str, data: bytes) -> None:
    out = CORPUS / target
    out.mkdir(parents=True, exist_ok=True)
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)


def preset_files() -> list[Path]:
    files = sorted((ROOT / "presets").rglob("*.y*ml"))
    files += sorted((ROOT / "tests" / "cli" / "validate").rglob("*.y*ml"))
    return [f for f in files if f.is_file()]


def presets() -> int:
    n = 0
    for f in preset_files():
        put("preset_validate", f.read_bytes())
        n += 1
    for case in sorted((ROOT / "tests" / "cli" / "validate").iterdir()):
        files = sorted(p for p in case.rglob("*.y*ml") if p.is_file())
        if len(files) < 2:
            continue
        data = files[0].read_bytes()
        for f in files[1:]:
            data += b"\n#>> " + f.stem.encode() + b"\n" + f.read_bytes()
        put("preset_validate", data)
        n += 1
    return n


def templates() -> int:
    try:
        import yaml
    except ImportError:
        print("seeds.py: PyYAML missing, template seeds from fixtures skipped", file=sys.stderr)
        return 0
    n = 0

    def sections_of(doc) -> list[tuple[str, str]]:
        out = []
        if not isinstance(doc, dict):
            return out
        layers = doc.get("layers") or [doc]
        for layer in layers:
            if not isinstance(layer, dict):
                continue
            secs = layer.get("sections")
            if secs is None and isinstance(layer.get("persona"), dict):
                secs = layer["persona"].get("sections")
            for s in secs or []:
                if isinstance(s, dict) and isinstance(s.get("text"), str):
                    out.append((s["text"], str(s.get("when") or "")))
            for c in layer.get("contexts") or []:
                if isinstance(c, dict) and isinstance(c.get("text"), str):
                    out.append(("", "", c["text"]))  # type: ignore[arg-type]
        return out

    docs = sorted((ROOT / "tests" / "conformance" / "core").glob("*.yaml"))
    docs += sorted((ROOT / "presets").rglob("*.yaml"))
    for path in docs:
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except Exception:  # a fixture that is invalid on purpose
            continue
        for entry in sections_of(doc):
            if len(entry) == 2:
                text, when = entry
                data = text + ("\0" + when if when else "")
            else:
                data = "Static.\0\0" + entry[2]
            put("template_render", data.encode())
            n += 1
    return n


BUILTIN_TOOLS = ("bash", "edit_file", "glob", "grep", "list_dir", "read_file", "todo_write", "write_file")


def tool_patterns() -> int:
    try:
        import yaml
    except ImportError:
        print("seeds.py: PyYAML missing, tool patterns from presets skipped", file=sys.stderr)
        return 0
    patterns: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("allow", "deny") and isinstance(value, list):
                    patterns.update(v for v in value if isinstance(v, str))
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted((ROOT / "presets").rglob("*.yaml")):
        try:
            walk(yaml.safe_load(path.read_text(encoding="utf-8")))
        except Exception:  # a fixture that is invalid on purpose
            continue
    n = 0
    for pattern in sorted(patterns):
        for name in BUILTIN_TOOLS:
            put("tool_pattern", f"{pattern}\0{name}".encode())
            n += 1
    return n


def sse_header(config: int, cuts: list[int]) -> bytes:
    """sse_stream's header: the config byte, the split count, the split points."""
    cuts = cuts[:15]
    return bytes([config, len(cuts)]) + b"".join(c.to_bytes(2, "little") for c in cuts)


def sse_bodies() -> list[tuple[bool, str, bytes]]:
    """(anthropic?, name, body) for every SSE seed, the stream_parse seeds framed."""
    out = []
    for f in sorted((HERE / "seeds" / "sse_stream").glob("*")):
        out.append(("anthropic" in f.name, f.name, f.read_bytes()))
    for f in sorted((HERE / "seeds" / "stream_parse").glob("*")):
        data = f.read_bytes()
        if not data or "whole" in f.name:
            continue
        anthropic = data[0] % 2 == 1
        body = b""
        for line in data[1:].split(b"\n"):
            if not line:
                continue
            if anthropic and line.startswith(b'{"type":"'):
                kind = line[9:].split(b'"', 1)[0]
                body += b"event: " + kind + b"\n"
            body += b"data: " + line + b"\n\n"
        out.append((anthropic, f.name, body))
    return out


def sse_streams() -> int:
    n = 0
    for anthropic, _name, body in sse_bodies():
        dialect = 1 if anthropic else 0
        variants = [
            body,
            body.replace(b"\n", b"\r\n"),
            body.replace(b"\n", b"\r"),
            b"\xef\xbb\xbf: comment\nid: 7\n" + body,
        ]
        for i, v in enumerate(variants):
            # Split inside every CRLF, after every CR, inside UTF-8 sequences.
            inside = [j + 1 for j in range(len(v) - 1) if v[j : j + 2] == b"\r\n" or v[j] >= 0xC0]
            evenly = [len(v) * k // 8 for k in range(1, 8)]
            for config, cuts in (
                (dialect, []),
                (dialect | (i * 16 + 60) << 2 & 0xFC, inside),
                (dialect | 2 | (i * 8 + 4) << 2 & 0xFC, evenly),
                (dialect | 2 | 0xFC, inside[::3]),
            ):
                put("sse_stream", sse_header(config, cuts) + v)
                n += 1
    return n


# (key, user) pairs for the redact seeds.
REDACT_CASES = (
    ("sk-live-0123456789abcdefXYZ", "user"),
    ("sk-ant-api03-AbCdEf+/gh=ij~kl.mn_op", "api"),
    ("abc+def/ghi=jkl", ""),
    ("p\u00e4ssw\u00f6rd-\u6f22\u5b57-42", "me"),
    ("hunter2", "x"),
    ("k3y", "u:v"),
    ("aaaaaaaa", "a"),
    ("x", ""),
)


def redact_seed(key: str, user: str, ops: list[int], filler: list[str]) -> bytes:
    k = key.encode()
    u = user.encode()
    data = bytes([(len(k) - 1) % 48]) + k + bytes([len(u)]) + u
    pieces = [bytes([op]) + text.encode() for op, text in zip(ops, filler)]
    return data + b"\0".join(pieces)


def redacts() -> int:
    n = 0
    filler = ["The key is ", " and again: ", "\u00e9\u6f22 tail ", " Authorization: Basic ", "", "?q="]
    for key, user in REDACT_CASES:
        for form in range(8):
            for split in (0, 3, 7):
                op = 8 | form | split << 4 | (0x80 if form == 3 else 0)
                put("redact", redact_seed(key, user, [op, 0], [filler[form % 6], " end"]))
                n += 1
        ops = [8 | f | (f % 8) << 4 for f in range(8)] + [0]
        put("redact", redact_seed(key, user, ops, filler + ["a", "b", "c"]))
        n += 1
    return n


TARGETS = (
    "preset_validate",
    "template_render",
    "stream_parse",
    "tool_pattern",
    "tool_call",
    "sse_stream",
    "redact",
)


def main() -> int:
    counts = {}
    for target in TARGETS:
        # sse_stream's seeds are bodies without a header: sse_streams() frames them.
        seeds = [] if target == "sse_stream" else sorted((HERE / "seeds" / target).glob("*"))
        seeds += sorted((HERE / "regressions" / target).glob("*"))
        for s in seeds:
            put(target, s.read_bytes())
        counts[target] = len(seeds)
    counts["preset_validate"] += presets()
    counts["template_render"] += templates()
    counts["tool_pattern"] += tool_patterns()
    counts["sse_stream"] += sse_streams()
    counts["redact"] += redacts()
    for target, n in counts.items():
        total = len(list((CORPUS / target).iterdir()))
        print(f"seeds.py: {target}: {n} seeds, {total} inputs in fuzz/corpus/{target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
