"""A scraper as Prometheus is one: a long-lived process that GETs URL HZ times a second
(default 1; waiting for the endpoint to come up first, every 20 ms) and appends each
scrape's time, status and size to LOG, until it is stopped.

Usage: python3 scrape.py URL LOG [HZ]"""
import sys
import time
import urllib.request

url, log = sys.argv[1], sys.argv[2]
period = 1.0 / float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
with open(log, "a") as out:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                body = r.read()
                out.write(f"{time.time():.3f}\t{r.status}\t{len(body)}\n")
                out.flush()
            time.sleep(period)
        except OSError:
            time.sleep(0.02)
