#!/usr/bin/env python3
"""pprof_raw.py: the samples of a pprof profile as `go tool pprof -raw` prints them, as JSON,
for tests that check what `go tool pprof` itself read (not kprof's own decoding).

  go tool pprof -raw FILE | pprof_raw.py  ->  {"types": [...], "default": TYPE,
      "samples": [{"values": {type: v}, "frames": [leaf first], "labels": {k: v}}]}

A location with inlined functions gives each of them, innermost first.
"""
import json
import re
import sys

SAMPLE = re.compile(r"^\s+(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$")
LABEL = re.compile(r"(\w+):\[([^\]]*)\]")
LOC = re.compile(r"^\s+(\d+): 0x[0-9a-f]+ M=\d+ (.*?) \S*:\d+ s=\d+")
INL = re.compile(r"^\s+(.*?) \S*:\d+ s=\d+$")


def main():
    types, dflt, samples, locs = [], None, [], {}
    section, last_loc = None, None
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            if not types:
                for t in line.split():
                    name = t.split("/")[0]
                    if t.endswith("[dflt]"):
                        dflt = name
                    types.append(name)
                continue
            m = SAMPLE.match(line)
            if m:
                vals = [int(v) for v in m.group(1).split()]
                samples.append({"values": dict(zip(types, vals)),
                                "locs": [int(x) for x in m.group(2).split()], "labels": {}})
            elif samples:
                samples[-1]["labels"].update(LABEL.findall(line))
        elif section == "Locations":
            m = LOC.match(line)
            if m:
                last_loc = int(m.group(1))
                locs[last_loc] = [m.group(2)]
            elif last_loc is not None and INL.match(line):
                locs[last_loc].append(INL.match(line).group(1))
    for s in samples:
        s["frames"] = [f for loc in s.pop("locs") for f in locs.get(loc, ["?"])]
    json.dump({"types": types, "default": dflt or (types[-1] if types else None),
               "samples": samples}, sys.stdout)


main()
