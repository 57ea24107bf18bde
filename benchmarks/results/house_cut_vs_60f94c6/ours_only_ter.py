import sys, time
from benchmarks.harness import data_dir
from benchmarks.speed.text import load_webnlg
import nlgmetrics
from nlgmetrics.ter import ter
systems = load_webnlg(data_dir(), 15)
def run():
    for s,(p,r) in systems.items(): ter(p, r)
run(); ts=[]
for _ in range(3):
    t=time.process_time(); run(); ts.append(time.process_time()-t)
print("ter", "old" if "h0" in nlgmetrics.__file__ else "new", sorted(ts)[1])
