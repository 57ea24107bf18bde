import sys, time, os
from benchmarks.harness import data_dir
from benchmarks.speed.text import load_webnlg
systems = load_webnlg(data_dir(), 150)
what = sys.argv[1]
import nlgmetrics
def run():
    if what == "rouge":
        from nlgmetrics.rouge import rouge_family
        from nlgmetrics.rouge.api import clear_cache
        clear_cache()
        for s,(p,r) in systems.items(): rouge_family(p, r, n_bootstrap=0)
    else:
        from nlgmetrics.bleu import bleu, clear_caches
        for s,(p,r) in systems.items():
            clear_caches(); bleu(p, r)
run()
ts=[]
for _ in range(5):
    t=time.process_time(); run(); ts.append(time.process_time()-t)
print(what, "old" if "h0" in nlgmetrics.__file__ else "new", sorted(ts)[2])
