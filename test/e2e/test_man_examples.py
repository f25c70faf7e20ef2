"""test_man_examples.py - the EXAMPLES of every man page (packaging/man/*.scd) are run, so the
pages cannot drift from the programs (STYLE.md: docs are tested).

Each fenced block of a page's EXAMPLES section is one shell script, run with `sh -e` as root in
a directory of its own per page (blocks of a page run in order and share it: the first makes the
key and trace the next ones use). A block expects exit status 0 unless its last line ends with
`# exit N`. Here the programs are the build tree's: they come first in PATH and the installed
policy directory is mapped to the source tree's policies/. test_package.py runs the same
examples against the installed package, unchanged.

Also checked: every option a page shows for a command exists in that command's --help.
"""
import os
import re
import subprocess
import sys
import tempfile
import shutil
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402

MAN_DIR = os.path.join(mwtest.SOURCE_DIR, "packaging", "man")
PAGES = ["mcpwitness.1", "mcpwitness-collect.8", "mcpwitness-policy.5", "mcpwitness-trace.5"]
INSTALLED_POLICIES = "/usr/share/mcpwitness/policies/"


def examples(page):
    """The fenced blocks of the EXAMPLES section of page: [(script, expected_exit)]."""
    with open(os.path.join(MAN_DIR, page + ".scd"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^# EXAMPLES\n(.*?)(?=^# )", text, re.S | re.M)
    if not m:
        raise AssertionError("%s has no EXAMPLES section" % page)
    out = []
    for block in re.findall(r"^```\n(.*?)^```$", m.group(1), re.S | re.M):
        lines = block.rstrip("\n").splitlines()
        want = 0
        e = re.search(r"#\s*exit\s+(\d+)\s*$", lines[-1])
        if e:
            want = int(e.group(1))
        out.append(("\n".join(lines) + "\n", want))
    if not out:
        raise AssertionError("%s: EXAMPLES has no example" % page)
    return out


def run_page(testcase, page, env, map_policies=None, timeout=180):
    """Runs the examples of page in a fresh directory; asserts each block's exit status."""
    work = tempfile.mkdtemp(prefix="mwman.")
    os.chmod(work, 0o755)
    try:
        for i, (script, want) in enumerate(examples(page), 1):
            if map_policies:
                script = script.replace(INSTALLED_POLICIES, map_policies.rstrip("/") + "/")
            r = subprocess.run(["sh", "-e", "-c", script], cwd=work, env=env,
                               capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL)
            testcase.assertEqual(r.returncode, want, "%s example %d:\n%s\nstdout:\n%s\nstderr:\n%s"
                                 % (page, i, script, r.stdout, r.stderr))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_env():
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.dirname(mwtest.ANALYZER), os.path.dirname(mwtest.COLLECT),
                                   env.get("PATH", "/usr/bin:/bin")])
    return env


def page_options(page):
    """Every --long-option the page names: anywhere in its prose, and in its code blocks after
    the name of one of our programs (what precedes it, e.g. timeout's options, is not ours)."""
    opts, in_code = set(), False
    with open(os.path.join(MAN_DIR, page + ".scd"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                m = re.search(r"\bmcpwitness", line)
                line = line[m.start():] if m else ""
            opts.update(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", line))
    return opts


def all_help(programs):
    """The --help of each program and of each mcpwitness subcommand, concatenated."""
    out = []
    for prog in programs:
        out.append(mwtest.run([prog, "--help"]).stdout)
        if prog == mwtest.ANALYZER:
            for verb in VERBS:
                out.append(mwtest.run([prog] + verb + ["--help"]).stdout)
    return "\n".join(out)


VERBS = (["keygen"], ["verify"], ["dump"], ["export"], ["calls"], ["analyze"],
         ["policy", "check"], ["policy", "learn"], ["diff"], ["probe"])

PAGE_PROGRAMS = {
    "mcpwitness.1": [mwtest.ANALYZER, mwtest.COLLECT],
    "mcpwitness-collect.8": [mwtest.COLLECT, mwtest.ANALYZER],
    "mcpwitness-policy.5": [mwtest.ANALYZER, mwtest.COLLECT],
    "mcpwitness-trace.5": [mwtest.ANALYZER, mwtest.COLLECT],
}


class ManExamples(mwtest.E2ETestCase):
    def test_every_page_has_examples(self):
        for page in PAGES:
            self.assertTrue(examples(page), page)

    def test_options_named_exist(self):
        for page in PAGES:
            helps = all_help(PAGE_PROGRAMS[page])
            for opt in sorted(page_options(page)):
                self.assertRegex(helps, r"(?<![\w-])%s\b" % re.escape(opt),
                                 "%s names %s, which no --help lists" % (page, opt))

    def test_every_option_documented(self):
        """The other way round: each option a --help lists is described in the program's page."""
        pages = {mwtest.COLLECT: "mcpwitness-collect.8", mwtest.ANALYZER: "mcpwitness.1"}
        for prog, page in pages.items():
            documented = page_options(page)
            verbs = VERBS if prog == mwtest.ANALYZER else ([],)
            for verb in verbs:
                helptext = mwtest.run([prog] + verb + ["--help"]).stdout
                for opt in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", helptext))):
                    self.assertIn(opt, documented, "%s %s --help lists %s, which %s does not "
                                  "describe" % (os.path.basename(prog), " ".join(verb), opt, page))

    def test_every_default_rule_described(self):
        """THE DEFAULT POLICY of mcpwitness-policy(5) names each rule of the shipped policy,
        with its severity and category."""
        with open(os.path.join(MAN_DIR, "mcpwitness-policy.5.scd"), encoding="utf-8") as f:
            page = f.read()
        with open(mwtest.DEFAULT_POLICY, encoding="utf-8") as f:
            text = f.read()
        rules = re.findall(r"(?m)^  - id: (\S+)\n(?:    .*\n)*?    severity: (\S+)\n"
                           r"    category: (\S+)", text)
        self.assertGreater(len(rules), 30)
        for rid, sev, cat in rules:
            self.assertIn("*%s* (%s, %s)" % (rid, sev, cat), page)

    def test_collect_examples(self):
        run_page(self, "mcpwitness-collect.8", build_env(), os.path.join(mwtest.SOURCE_DIR, "policies"))

    def test_mcpwitness_examples(self):
        run_page(self, "mcpwitness.1", build_env(), os.path.join(mwtest.SOURCE_DIR, "policies"))

    def test_policy_examples(self):
        run_page(self, "mcpwitness-policy.5", build_env(), os.path.join(mwtest.SOURCE_DIR, "policies"))

    def test_trace_examples(self):
        run_page(self, "mcpwitness-trace.5", build_env(), os.path.join(mwtest.SOURCE_DIR, "policies"))


if __name__ == "__main__":
    mwtest.main()
