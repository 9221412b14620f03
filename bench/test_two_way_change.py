"""bench/two-way-change.py's Maildir mode: the same files each run, toggled back and forth."""
import importlib.util
import os
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("two_way_change", os.path.join(HERE, "two-way-change.py"))
change = importlib.util.module_from_spec(spec)
spec.loader.exec_module(change)


class ToggleMaildirTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        for sub in ("cur", "new", "tmp"):
            os.mkdir(os.path.join(self.dir, sub))

    def touch(self, sub, name):
        with open(os.path.join(self.dir, sub, name), "w") as f:
            f.write("Subject: x\n\nbody\n")

    def names(self):
        return {sub: sorted(os.listdir(os.path.join(self.dir, sub))) for sub in ("cur", "new")}

    def test_toggled_names_keep_flags_in_order(self):
        self.assertEqual(change.toggled_name("cur", "u1:2,FR"), "u1:2,FRS")
        self.assertEqual(change.toggled_name("cur", "u1:2,FRST"), "u1:2,FRT")
        self.assertEqual(change.toggled_name("cur", "u1:2,"), "u1:2,S")
        self.assertEqual(change.toggled_name("cur", "u1:2,Sa"), "u1:2,a")
        self.assertEqual(change.toggled_name("new", "u1"), "u1:2,S")

    def test_two_runs_toggle_the_same_files_back(self):
        for i in range(10):
            self.touch("cur", "m%02d.hudson-x:2,%s" % (i, "S" if i % 2 else "F"))
        self.touch("cur", ".hidden")
        before = self.names()
        line = change.toggle_maildir(self.dir, 4)
        self.assertTrue(line.startswith("4 files:"), line)
        after = self.names()
        changed = set(before["cur"]) - set(after["cur"])
        self.assertEqual(len(changed), 4)
        self.assertEqual({change.unique_part(n) for n in changed},
                         {"m00.hudson-x", "m02.hudson-x", "m05.hudson-x", "m07.hudson-x"})
        change.toggle_maildir(self.dir, 4)
        self.assertEqual(self.names(), before)

    def test_a_new_file_moves_to_cur_seen(self):
        self.touch("new", "n1.hudson-x")
        self.assertEqual(change.toggle_maildir(self.dir, 1000), "1 files: 1 marked seen, 0 unseen")
        self.assertEqual(self.names(), {"cur": ["n1.hudson-x:2,S"], "new": []})
        self.assertEqual(change.toggle_maildir(self.dir, 1000), "1 files: 0 marked seen, 1 unseen")
        self.assertEqual(self.names(), {"cur": ["n1.hudson-x:2,"], "new": []})


if __name__ == "__main__":
    unittest.main()
