"""test_package.py - the Debian package, built by its one command and installed on this machine.

packaging/build-deb.sh builds it (or MW_DEB names a .deb already built); lintian must report no
error; `dpkg -i` installs it (missing dependencies through apt-get); then the INSTALLED programs
run: the installed demo (/usr/share/mcpwitness/example/demo.sh), a recording signed with the
host key the postinst made and verified with its public half, an analysis with the installed
default policy (no -p), the man pages' EXAMPLES, and every command and report format on the
recorded fixtures, which must print exactly what the tree's analyzer prints (the package is
built with a profile, see MW_PGO). Checked: owners and modes, no setuid or setgid
file, the system user, the key's modes, a reinstall that keeps the key; `dpkg -r` removes every
file and keeps the key, `dpkg -P` removes the key.

It changes the machine, so it refuses to run (SKIP) where mcpwitness is already installed or
/etc/mcpwitness exists: it would otherwise remove someone's installation and key.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mwtest  # noqa: E402
import test_man_examples  # noqa: E402

KEYDIR = "/etc/mcpwitness"


def installed():
    r = mwtest.run(["dpkg-query", "-W", "-f=${Status}", "mcpwitness"])
    return r.returncode == 0 and "install ok installed" in r.stdout


def package_files():
    r = mwtest.run(["dpkg", "-L", "mcpwitness"])
    return [p for p in r.stdout.splitlines() if p.startswith("/")]


class Package(mwtest.E2ETestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mwdeb.")
        cls.deb = os.environ.get("MW_DEB")
        if not cls.deb:
            r = subprocess.run(["sh", os.path.join(mwtest.SOURCE_DIR, "packaging", "build-deb.sh"),
                                os.path.join(cls.tmp, "build")],
                               capture_output=True, text=True, timeout=1200)
            if r.returncode != 0:
                raise AssertionError("build-deb.sh failed:\n" + r.stdout + r.stderr)
            cls.deb = r.stdout.strip().splitlines()[-1]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def install(self):
        r = mwtest.run(["dpkg", "-i", self.deb], timeout=300)
        if r.returncode != 0:  # dependencies missing: let apt bring them, as a user would
            r = mwtest.run(["apt-get", "install", "-f", "-y", "-q"], timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(installed())

    def purge(self):
        if installed() or mwtest.run(["dpkg-query", "-W", "mcpwitness"]).returncode == 0:
            mwtest.run(["dpkg", "-P", "mcpwitness"], timeout=300)

    def test_lintian_reports_no_error(self):
        # lintian 2.116 leaves a temporary database (mldbm-elf-*) behind: in a directory of
        # the test's own, removed after
        tmp = tempfile.mkdtemp(prefix="mwlintian.")
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        r = mwtest.run(["lintian", "--fail-on", "error", self.deb], timeout=600,
                       env=dict(os.environ, TMPDIR=tmp))
        errors = [l for l in r.stdout.splitlines() if l.startswith("E:")]
        self.assertEqual(errors, [], r.stdout + r.stderr)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_install_run_remove_purge(self):
        self.addCleanup(self.purge)
        self.install()
        self.check_files()
        self.check_user_and_key()
        self.check_installed_demo()
        self.check_host_key_recording()
        self.check_man_examples()
        self.check_same_output_as_tree()
        keyid = self.key_id()
        self.install()  # a reinstall (upgrade path) never touches the key
        self.assertEqual(self.key_id(), keyid)

        files = [p for p in package_files() if os.path.isfile(p)]
        r = mwtest.run(["dpkg", "-r", "mcpwitness"], timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual([p for p in files if os.path.exists(p)], [])
        self.assertTrue(os.path.exists(os.path.join(KEYDIR, "signing.key")), "remove kept the key")
        r = mwtest.run(["dpkg", "-P", "mcpwitness"], timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(KEYDIR), "purge removed the key")
        self.assertNotEqual(mwtest.run(["dpkg-query", "-W", "mcpwitness"]).returncode, 0)

    def check_files(self):
        expect = {
            "/usr/sbin/mcpwitness-collect": 0o755,
            "/usr/bin/mcpwitness": 0o755,
            "/usr/bin/mcpwitness-probe": 0o755,
            "/usr/share/mcpwitness/policies/default.yaml": 0o644,
            "/usr/share/mcpwitness/example/vulnerable_server.py": 0o644,
            "/usr/share/mcpwitness/example/client.py": 0o644,
            "/usr/share/mcpwitness/example/demo.sh": 0o755,
            "/usr/share/man/man8/mcpwitness-collect.8.gz": 0o644,
            "/usr/share/man/man1/mcpwitness.1.gz": 0o644,
            "/usr/share/man/man1/mcpwitness-probe.1.gz": 0o644,
            "/usr/share/man/man5/mcpwitness-policy.5.gz": 0o644,
            "/usr/share/man/man5/mcpwitness-trace.5.gz": 0o644,
            "/usr/share/doc/mcpwitness/copyright": 0o644,
        }
        for path, mode in expect.items():
            st = os.lstat(path)
            self.assertEqual((st.st_uid, st.st_gid), (0, 0), path)
            self.assertEqual(stat.S_IMODE(st.st_mode), mode, path)
        for path in package_files():
            st = os.lstat(path)
            self.assertEqual(st.st_mode & (stat.S_ISUID | stat.S_ISGID), 0, "%s is set-id" % path)
            self.assertEqual((st.st_uid, st.st_gid), (0, 0), path)
            self.assertEqual(st.st_mode & stat.S_IWOTH, 0, "%s is world-writable" % path)
        for page in ("mcpwitness", "mcpwitness-collect", "mcpwitness-policy", "mcpwitness-trace",
                     "mcpwitness-probe"):
            r = mwtest.run(["man", "-w", page])
            self.assertEqual(r.returncode, 0, page + r.stderr)
        r = mwtest.run(["man", "-P", "cat", "8", "mcpwitness-collect"], env=dict(os.environ, MANWIDTH="80"))
        self.assertIn("OVERHEAD", r.stdout)
        self.assertIn("REQUIREMENTS", r.stdout)

    def check_user_and_key(self):
        import pwd
        pw = pwd.getpwnam("mcpwitness")
        self.assertLess(pw.pw_uid, 1000, "a system user")
        st = os.stat(KEYDIR)
        self.assertEqual((st.st_uid, stat.S_IMODE(st.st_mode)), (0, 0o755))  # pub readable
        st = os.stat(os.path.join(KEYDIR, "signing.key"))
        self.assertEqual((st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)), (0, 0, 0o600))
        st = os.stat(os.path.join(KEYDIR, "signing.pub"))
        self.assertEqual((st.st_uid, stat.S_IMODE(st.st_mode)), (0, 0o644))

    def key_id(self):
        with open(os.path.join(KEYDIR, "signing.pub")) as f:
            return f.read()

    def check_installed_demo(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MW_")}
        r = subprocess.run(["sh", "/usr/share/mcpwitness/example/demo.sh"], env=env,
                           capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
                           cwd="/")
        tmp = re.search(r"== demo directory: (\S+)", r.stdout)
        if tmp:
            self.addCleanup(shutil.rmtree, tmp.group(1), True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("VALID_COMPLETE", r.stdout)
        self.assertIn("policy: /usr/share/mcpwitness/policies/default.yaml", r.stdout)
        self.assertIn("[critical] file.sensitive-read: read ", r.stdout)
        self.assertIn("[high] exec.unexpected: executed /bin/sh", r.stdout)
        self.assertIn("analyzed by mcpwitness", r.stdout)

    def check_host_key_recording(self):
        trace = self.work.join("host.mcpt")
        r = mwtest.run(["/usr/sbin/mcpwitness-collect", "-q", "-o", trace, "--user", "nobody", "--",
                        "/bin/sh", "-c", "cat /etc/hostname >/dev/null; true"])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = mwtest.run(["/usr/bin/mcpwitness", "verify", trace])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("VALID_COMPLETE", r.stdout)
        r = mwtest.run(["/usr/bin/mcpwitness", "analyze", trace])  # the installed default policy
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("policy: /usr/share/mcpwitness/policies/default.yaml", r.stdout)
        self.assertIn("exec.unexpected: executed /usr/bin/cat", r.stdout)

    def check_same_output_as_tree(self):
        """The package's analyzer is built with a profile (MW_PGO): it must say exactly what the
        tree's analyzer says, on every command and format of the training and with a policy
        the training does not read (site-example.yaml over the default)."""
        fx = os.path.join(mwtest.SOURCE_DIR, "test", "fixtures", "analysis")
        more = os.path.join(mwtest.SOURCE_DIR, "test", "fixtures", "policies")
        policies = [["-p", mwtest.DEFAULT_POLICY], ["-p", os.path.join(fx, "golden.yaml")],
                    ["-p", os.path.join(more, "all-forms.yaml")],
                    ["-p", mwtest.DEFAULT_POLICY, "-p", os.path.join(more, "site-example.yaml")]]
        for name in ("example.mcpt", "rules.mcpt"):
            trace = os.path.join(fx, name)
            key = ["--pubkey", os.path.join(fx, "signing.pub")]
            cmds = [["verify", trace] + key, ["dump", trace], ["dump", "--json", trace],
                    ["calls", trace] + key, ["calls", "--json", trace] + key]
            for p in policies:
                for fmt in ("text", "json", "sarif", "html"):
                    cmds.append(["analyze", trace] + key + p + ["--format", fmt])
            for cmd in cmds:
                tree = mwtest.run([mwtest.ANALYZER] + cmd)
                pkg = mwtest.run(["/usr/bin/mcpwitness"] + cmd)
                what = " ".join(cmd)
                self.assertEqual(tree.returncode, 0, what + tree.stderr)
                self.assertEqual((pkg.returncode, pkg.stdout, pkg.stderr),
                                 (tree.returncode, tree.stdout, tree.stderr), what)

    def check_man_examples(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MW_")}
        env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"
        for page in test_man_examples.PAGES:
            test_man_examples.run_page(self, page, env)


def main():
    mwtest.require_root()
    if installed() or os.path.exists(KEYDIR):
        print("SKIP: mcpwitness is installed or %s exists here; this test would remove them" % KEYDIR)
        sys.exit(mwtest.SKIP)
    for tool in ("dpkg", "lintian", "cpack"):
        if not shutil.which(tool):
            raise SystemExit("%s is missing: packaging/install-deps.sh installs it" % tool)
    mwtest.unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
