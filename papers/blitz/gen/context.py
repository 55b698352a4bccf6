"""context.py - what every part of the generator reads: the results
directory of each experiment (from find-results' list), their meta.json,
the source tree, and the list of figures made so far."""
import json
import os


class Context:
    def __init__(self, listfile, srctree):
        self.srctree = srctree
        self.dirs = {}
        for line in open(listfile):
            name, _, d = line.strip().partition(" ")
            if name:
                self.dirs[name] = d
        self.figures = []

    def dir(self, experiment):
        """The results directory of @experiment, or None."""
        return self.dirs.get(experiment)

    def meta(self, experiment):
        d = self.dir(experiment)
        if not d:
            return {}
        try:
            return json.load(open(os.path.join(d, "meta.json")))
        except (OSError, ValueError):
            return {}

    def path(self, experiment, *rel):
        return os.path.join(self.dir(experiment), *rel)

    def source(self, rel):
        return os.path.join(self.srctree, rel)

    def figure(self, rel):
        """Records generated/@rel as a figure the paper includes."""
        self.figures.append(rel)
        return rel
