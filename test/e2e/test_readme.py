"""test_readme.py - the README's commands tell the truth (STYLE.md: docs are tested).

- every option a README command gives to mcpwitness, mcpwitness-collect or mcpwitness-probe
  is one that program (or that subcommand) lists in its --help;
- the sudoers rules are valid sudoers syntax (`visudo -c -f`), the wrapper script is valid sh,
  the client configuration is valid JSON;
- the blocks marked `<!-- test: run -->` are run as written, as root, in a directory holding
  what they name (keys/, a trace.mcpt recorded there, policies/), with the build's programs
  first in PATH: each must exit 0.
- every file or folder of the source tree it names (`collector/loader.c`, a link to
  test/bench/HISTORY.md, `test/bench/wl_*.c`) exists.
The first block (the two commands) is test_demo.py's.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402
import test_man_examples  # noqa: E402

PROBE = os.path.join(os.path.dirname(mwtest.ANALYZER), "mcpwitness-probe")
SUBCOMMANDS = ("keygen", "verify", "dump", "analyze", "policy", "probe", "calls", "diff")


def readme():
    """The README's text."""
    with open(os.path.join(mwtest.SOURCE_DIR, "README.md"), encoding="utf-8") as f:
        return f.read()


def blocks():
    """[(language, text, marked_to_run)] of every fenced block of the README."""
    out = []
    fence = r"(<!-- test: run -->\n)?```(\w*)\n(.*?)^```$"
    for m in re.finditer(fence, readme(), re.S | re.M):
        out.append((m.group(2), m.group(3), bool(m.group(1))))
    return out


def help_text(argv):
    r = mwtest.run(argv + ["--help"])
    return r.stdout


def commands(text):
    """(program, subcommand or '', [options]) of every mcpwitness command in a block."""
    found = []
    for line in text.splitlines():
        line = line.split(" #")[0]
        for m in re.finditer(r"(?:^|[\s/\"])(mcpwitness(?:-collect|-probe)?)(?=\s|$)(.*?)(?=$|\||;|&&|>)",
                             line):
            prog, rest = m.group(1), m.group(2).split()
            sub = rest[0] if prog == "mcpwitness" and rest and rest[0] in SUBCOMMANDS else ""
            if sub == "policy":  # policy check / policy learn
                sub += " " + (rest[1] if len(rest) > 1 and rest[1] == "learn" else "check")
            opts = [o.split("=")[0] for o in rest if re.match(r"--[a-z]", o)]
            found.append((prog, sub, opts))
    return found


TREE_DIRS = ("bpf/", "collector/", "analyzer/", "proto/", "policies/", "test/", "packaging/")


def tree_paths():
    """Every source-tree path the README names in backquotes or as a link target."""
    found = set()
    for m in re.finditer(r"`([^`\s]+)`|\]\(([^)\s]+)\)", readme()):
        p = m.group(1) or m.group(2)
        if p.startswith(TREE_DIRS):
            found.add(p)
    return found


class Readme(mwtest.E2ETestCase):
    def test_options_exist(self):
        binaries = {"mcpwitness": mwtest.ANALYZER, "mcpwitness-collect": mwtest.COLLECT,
                    "mcpwitness-probe": PROBE}
        seen = 0
        for lang, text, _ in blocks():
            if lang not in ("sh", "sudoers", "json"):
                continue
            for prog, sub, opts in commands(text):
                argv = [binaries[prog]] + sub.split()
                helps = help_text(argv)
                for opt in opts:
                    seen += 1
                    self.assertRegex(helps, r"(?<![\w-])%s\b" % re.escape(opt),
                                     "README: %s %s %s is not in its --help" % (prog, sub, opt))
        self.assertGreater(seen, 12)

    def test_named_paths_exist(self):
        paths = tree_paths()
        self.assertIn("test/bench/HISTORY.md", paths)
        for p in sorted(paths):
            self.assertTrue(glob.glob(os.path.join(mwtest.SOURCE_DIR, p.rstrip("/"))),
                            "README names %s, which is not in the source tree" % p)

    def test_sudoers_wrapper_and_json(self):
        kinds = set()
        for lang, text, _ in blocks():
            if lang == "sudoers":
                kinds.add(lang)
                with tempfile.NamedTemporaryFile("w", suffix=".sudoers") as f:
                    f.write(text)
                    f.flush()
                    r = mwtest.run(["visudo", "-c", "-f", f.name])
                    self.assertEqual(r.returncode, 0, text + r.stdout + r.stderr)
            elif lang == "sh" and text.startswith("#!/bin/sh"):
                kinds.add("script")
                r = subprocess.run(["sh", "-n"], input=text, capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
            elif lang == "json":
                kinds.add(lang)
                json.loads(text)
        self.assertEqual(kinds, {"sudoers", "script", "json"})

    def test_marked_blocks_run(self):
        work = tempfile.mkdtemp(prefix="mwreadme.")
        os.chmod(work, 0o755)
        self.addCleanup(shutil.rmtree, work, True)
        env = test_man_examples.build_env()
        os.symlink(os.path.join(mwtest.SOURCE_DIR, "policies"), os.path.join(work, "policies"))
        r = subprocess.run(["sh", "-e", "-c",
                            "mcpwitness keygen -o keys >/dev/null; "
                            "mcpwitness-collect -q -k keys/signing.key -o trace.mcpt "
                            "--user nobody -- /bin/sh -c 'ls / >/dev/null'"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        ran = 0
        for lang, text, run in blocks():
            if not run:
                continue
            ran += 1
            r = subprocess.run(["sh", "-e", "-c", text], cwd=work, env=env, capture_output=True,
                               text=True, timeout=120, stdin=subprocess.DEVNULL)
            self.assertEqual(r.returncode, 0, "%s\n%s%s" % (text, r.stdout, r.stderr))
        self.assertGreaterEqual(ran, 2)


if __name__ == "__main__":
    mwtest.main()
