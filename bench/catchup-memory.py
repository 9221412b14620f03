#!/usr/bin/env python3
"""Peak RSS of `hd-sync --catch-up` against tools/fake-gmail, sampled while it runs.

usage: bench/catchup-memory.py BIN_DIR N LABEL --corpus DIR [--prefetch-days D] [--latency A-B]
           [--quota Q] [--push-every S] [--faults 429:P,503:P] [--seconds S [--probe]] [--verbose]

DIR holds gmail.ndjson and labels.json (bench/mkcorpus.py); its first N messages are served.
BIN_DIR holds hd-auth and hd-sync (hd-mark and hd-search too for --push-every, which runs
`hd-mark archive` of one inbox thread every S seconds: another process writing the store).
--seconds stops the catch-up (SIGINT) after S seconds; --probe first has gdb call
malloc_stats() (into the catch-up's stderr, WORK/err.txt) and malloc_trim(0), and prints
the RSS before and after: memory that malloc_trim gives back was free but kept by malloc.
Work files go to /tmp/catchup-memory/work-LABEL; the peak comes from /usr/bin/time -v."""
import argparse, hashlib, json, os, shutil, subprocess, sys, time, urllib.request
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ACCOUNT = "alex.hudson@example.com"
p = argparse.ArgumentParser()
p.add_argument("bin"); p.add_argument("n", type=int); p.add_argument("label")
p.add_argument("--corpus", required=True)
p.add_argument("--prefetch-days", type=int, default=90)
p.add_argument("--latency", default="0")
p.add_argument("--quota", type=int, default=0)
p.add_argument("--env", action="append", default=[])
p.add_argument("--heaptrack", action="store_true")
p.add_argument("--verbose", action="store_true")
p.add_argument("--seconds", type=float, default=0)
p.add_argument("--faults", default="")
p.add_argument("--push-every", type=float, default=0)
p.add_argument("--probe", action="store_true", help="malloc_stats + malloc_trim via gdb before stopping")
a = p.parse_args()
SRC = a.corpus
BASE = "/tmp/catchup-memory"
os.makedirs(BASE, exist_ok=True)
corpus = BASE + "/corpus-%d-%s.ndjson" % (a.n, hashlib.sha1(os.path.abspath(SRC).encode()).hexdigest()[:8])
if not os.path.exists(corpus):
    with open(SRC + "/gmail.ndjson") as f, open(corpus + ".tmp", "w") as out:
        for i, line in enumerate(f):
            if i >= a.n: break
            out.write(line)
    os.rename(corpus + ".tmp", corpus)
work = BASE + "/work-%s" % a.label
shutil.rmtree(work, ignore_errors=True); os.makedirs(work)
low, _, high = a.latency.partition("-")
cmd = [sys.executable, ROOT + "/tools/fake-gmail/fake_gmail.py", "--port", "0", "--port-file", work + "/fake.url",
       "--gmail-ndjson", corpus, "--labels-json", SRC + "/labels.json", "--account", ACCOUNT,
       "--latency-ms", low, "--quota-per-minute", str(a.quota)]
if high: cmd += ["--latency-ms-max", high]
fake = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(work + "/fake.log", "w"))
try:
    while not (os.path.exists(work + "/fake.url") and os.path.getsize(work + "/fake.url") > 0):
        if fake.poll() is not None: sys.exit("fake exited")
        time.sleep(0.2)
    url = open(work + "/fake.url").read().strip()
    env = dict(os.environ)
    env.update({"PATH": a.bin + os.pathsep + env["PATH"], "HUDSON_DB": work + "/hudson.sqlite3",
                "HUDSON_CONFIG_DIR": work + "/config", "HUDSON_GMAIL_URL": url,
                "HUDSON_OAUTH_TOKEN_URL": url + "/token", "HUDSON_OAUTH_AUTH_URL": url + "/auth",
                "HUDSON_QUOTA_PER_MINUTE": str(a.quota or 100_000_000)})
    env.pop("HUDSON_ACCOUNT", None)
    for kv in a.env:
        k, _, v = kv.partition("="); env[k] = v
    json.dump({"installed": {"client_id": "hudson-demo-client", "client_secret": "hudson-demo-secret",
               "auth_uri": url + "/auth", "token_uri": url + "/token", "redirect_uris": ["http://localhost"]}},
              open(work + "/cs.json", "w"))
    open(work + "/rt", "w").write("demo-refresh-token\n")
    subprocess.run(["hd-auth", "add", ACCOUNT, "--client-secret", work + "/cs.json", "--refresh-token-file", work + "/rt",
                    "--lookback-days", "0"], env=env, check=True, stderr=subprocess.DEVNULL)
    if a.faults:
        rules = []
        for seed, item in enumerate(a.faults.split(",")):
            status, _, share = item.partition(":")
            rules.append({"method": "GET", "path": "/messages/[0-9A-Za-z_-]+$", "status": int(status),
                          "probability": float(share), "times": -1, "seed": seed + 1})
        req = urllib.request.Request(url + "/_admin/faults", data=json.dumps({"rules": rules}).encode(), method="POST")
        urllib.request.urlopen(req).read()
    sync = ["hd-sync", "--catch-up", "--prefetch-days", str(a.prefetch_days), "--json"] + (["--verbose"] if a.verbose else [])
    if a.heaptrack:
        sync = ["heaptrack", "-o", work + "/heaptrack"] + [shutil.which("hd-sync", path=env["PATH"])] + sync[1:]
    else:
        sync = ["/usr/bin/time", "-v"] + sync
    started = time.time()
    proc = subprocess.Popen(sync, env=env, stdout=open(work + "/out.json", "w"), stderr=open(work + "/err.txt", "w"))
    samples = []
    child = None
    next_push = a.push_every or None
    pushes = []
    def rss(pid):
        return {l.split(":")[0]: int(l.split()[1]) for l in open("/proc/%d/status" % pid) if l.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"))}
    def probe():
        before = rss(child)
        subprocess.run(["gdb", "-p", str(child), "-batch", "-ex", "call (void)malloc_stats()", "-ex", "call (int)malloc_trim(0)"],
                       capture_output=True, timeout=120)
        after = rss(child)
        print("probe: before", before, "after malloc_trim", after)
    while proc.poll() is None:
        time.sleep(2)
        if next_push and time.time() - started > next_push:
            next_push += a.push_every
            refs = subprocess.run(["hd-search", "-n", "1", "--ids", "in:inbox"], env=env, capture_output=True, text=True).stdout.split()
            if refs:
                r = subprocess.run(["hd-mark", "archive", refs[0]], env=env, capture_output=True, text=True)
                pushes.append((round(time.time() - started), r.returncode))
        if a.seconds and time.time() - started > a.seconds and child:
            if a.probe: probe()
            os.kill(child, 2); a.seconds = 0
        if child is None:
            try:
                kids = open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)).read().split()
                child = int(kids[0]) if kids else None
            except Exception: child = None
        if child:
            try:
                st = {l.split(":")[0]: l.split()[1] for l in open("/proc/%d/status" % child) if l.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile"))}
                stored = subprocess.run(["sqlite3", "-readonly", work + "/hudson.sqlite3", "select count(*) from messages"],
                                        capture_output=True, text=True).stdout.strip()
                samples.append((round(time.time() - started, 1), stored, int(st["VmRSS"]), int(st["VmHWM"]), int(st["RssAnon"]), int(st["RssFile"])))
            except Exception: pass
    elapsed = time.time() - started
    err = open(work + "/err.txt").read()
    peak = None
    for line in err.splitlines():
        if "Maximum resident set size" in line: peak = int(line.split()[-1])
    json.dump({"n": a.n, "label": a.label, "seconds": elapsed, "peak_kib": peak, "rc": proc.returncode, "samples": samples},
              open(work + "/result.json", "w"))
    print("pushes", pushes); print("%s n=%d rc=%d %.0fs peak=%s MiB" % (a.label, a.n, proc.returncode, elapsed, peak and round(peak / 1024, 1)))
    step = max(1, len(samples) // 15)
    for s in samples[::step] + samples[-1:]:
        print("  t=%6.1f stored=%7s rss=%6.1f hwm=%6.1f anon=%6.1f file=%5.1f" % (s[0], s[1], s[2]/1024, s[3]/1024, s[4]/1024, s[5]/1024))
    if proc.returncode: print(err[-2000:])
finally:
    fake.terminate(); fake.wait()
