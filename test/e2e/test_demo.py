"""test_demo.py - the README's first command, run as written: it must record the example server,
verify the trace and print the findings of the default policy. The build it would do is the
one this test suite already made (MW_DEMO_NO_BUILD and MW_BUILD_DIR point the script at it)."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402


def readme_commands():
    with open(os.path.join(mwtest.SOURCE_DIR, "README.md")) as f:
        text = f.read()
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


class Demo(mwtest.E2ETestCase):
    def test_readme_starts_with_the_two_commands(self):
        cmds = readme_commands()
        self.assertEqual(cmds, ["sh packaging/demo.sh", "sh packaging/run-tests.sh"])
        with open(os.path.join(mwtest.SOURCE_DIR, ".ci", "run")) as f:
            self.assertIn("packaging/run-tests.sh", f.read())

    def test_demo_command(self):
        env = dict(os.environ, MW_DEMO_NO_BUILD="1", MW_BUILD_DIR=mwtest.BUILD_DIR,
                   MW_COLLECT=mwtest.COLLECT, MW_ANALYZER=mwtest.ANALYZER)
        r = subprocess.run(readme_commands()[0], shell=True, cwd=mwtest.SOURCE_DIR, env=env,
                           capture_output=True, text=True, timeout=300)
        out = r.stdout
        tmp = re.search(r"== demo directory: (\S+)", out)
        if tmp:
            self.addCleanup(shutil.rmtree, tmp.group(1), True)
        self.assertEqual(r.returncode, 0, out + r.stderr)
        self.assertIn("VALID_COMPLETE", out)
        for line in ("[critical] file.sensitive-read: read ", "/home/.ssh/id_rsa",
                     "[high] exec.unexpected: executed /bin/sh",
                     "[high] file.persistence-write: openat ", "/home/.bashrc (persistence)",
                     "net.connect-loopback: connect to 127.0.0.1:"):
            self.assertIn(line, out)
        self.assertNotIn("exec.unexpected: executed /usr/bin/python3", out)
        self.assertTrue(os.path.exists(os.path.join(tmp.group(1), "findings.json")))
        # the calls story: the shell-out under its call, placed there by lineage
        story = out[out.index("== 4. the calls"):out.index("== 5. findings")]
        call = story[story.index("tools/call run_command"):]
        call = call[:call.index("\n== ")]
        self.assertRegex(call, r'/bin/sh \["/bin/sh" "-c" "id -un; uname -s"\] lineage')
        self.assertIn("exec /usr/bin/id", call)
        # and the HTML report, self-contained, naming the call and the finding
        with open(os.path.join(tmp.group(1), "report.html"), encoding="utf-8") as f:
            html = f.read()
        self.assertIn("run_command", html)
        self.assertIn("exec.unexpected", html)
        m = re.search(r"<script|<link|<img|<iframe|\ssrc=|\shref=", html)
        self.assertIsNone(m, "the report loads something: %r" % (m and html[m.start():m.start() + 80]))


if __name__ == "__main__":
    mwtest.main()
