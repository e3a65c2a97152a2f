"""Reads `go test -json` on stdin: prints the packages' results and the
output of failed tests as they end, then the skipped tests, and exits 1
when a skipped test (Package.Test) does not match the regex in argv[1]."""
import json
import re
import sys

allow = re.compile(sys.argv[1])
out = {}        # (package, test) -> output lines
skips = []      # (name, reason)
for line in sys.stdin:
    try:
        ev = json.loads(line)
    except ValueError:
        print(line, end="")  # a build error: go test prints it as text
        continue
    pkg, test, action = ev.get("Package", ""), ev.get("Test"), ev.get("Action")
    key = (pkg, test)
    if action == "output":
        out.setdefault(key, []).append(ev.get("Output", ""))
        continue
    if action == "fail":
        print("".join(out.get(key, [])), end="")
        if test is None:
            print(f"FAIL\t{pkg}")
    elif action == "pass" and test is None:
        print(f"ok  \t{pkg}\t{ev.get('Elapsed', 0):.3f}s")
    elif action == "skip":
        if test is None:
            print(f"?   \t{pkg}\t[no test files]")
        else:
            lines = [l.strip() for l in out.get(key, []) if l.strip() and not l.startswith(("=== ", "--- "))]
            skips.append((f"{pkg.rsplit('/', 1)[-1]}.{test}", lines[-1] if lines else ""))
    if action in ("pass", "fail", "skip"):
        out.pop(key, None)

bad = [(n, r) for n, r in skips if not allow.search(n)]
if skips:
    print(f"\n{len(skips)} skipped ({len(skips) - len(bad)} allowed):")
    for n, r in skips:
        print(f"  {'ok  ' if allow.search(n) else 'NOT ALLOWED'} {n}: {r}")
if bad:
    print(f"\n{len(bad)} tests that this step needs were skipped", file=sys.stderr)
    sys.exit(1)
