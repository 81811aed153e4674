#!/usr/bin/env bash
# Issue 24's soak (module fault-suite, io.sluice.faults.Soak): sluice broker with binary and HTTP producers, a consumer
# group and two ingest pipelines (offset-range in a sluice ingest process, coalescing in the broker) into ClickHouse,
# at a steady share of the capacity measured at start (or --rate), for --minutes N. Every minute: RSS and what it is
# made of (RssAnon / RssFile / RssShmem from /proc/<pid>/status, the resident pages of mapped journal files *.cq4 from
# smaps, NMT committed per category: heap, metaspace, threads, code, GC, other native), heap after a full GC, direct
# memory (NMT "Other"), threads and open fds of the broker and the ingest process, and produce and end-to-end latency
# percentiles, in soak.csv (at minute 2 an NMT baseline, smaps and class histogram; at the last minute the NMT diff,
# smaps and histogram again: <process>-nmt-diff.txt etc.); at the end soak.svg, the checker's counts (acknowledged, lost,
# duplicated) and a search of every log for Netty LEAK reports (leak detection paranoid). Exits 1 on a loss, a
# duplicate where exactly-once is stated (journal; coalescing is at-least-once, its duplicates are reported) or a leak;
# 2 on bad arguments.
#
#   scripts/soak.sh --minutes 60 --share 0.05
#   scripts/soak.sh --minutes 3 --rate 300
#
# Run directory (soak.csv, soak.svg, report.txt, history.jsonl, every process's log): fault-suite/target/soak/...
# or $SOAK_RUN_DIR. The classes are staged into the run directory, so rebuilding while a run goes on is safe.
set -euo pipefail
cd "$(dirname "$0")/.."

for a in "$@"; do
  if [ "$a" = "--help" ] || [ "$a" = "-h" ]; then
    echo "usage: scripts/soak.sh --minutes N [--rate EVENTS_PER_S | --share FRACTION (default 0.1)] [--seed S]"
    exit 0
  fi
done

if [ -z "${SOAK_SKIP_BUILD:-}" ]; then
  echo "soak.sh: building fault-suite ..." >&2
  ./mvnw -B -ntp -q -o -DskipTests package -pl fault-suite -am >&2
fi

run="${SOAK_RUN_DIR:-fault-suite/target/soak/run-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$run/lib"
run="$(cd "$run" && pwd)"
cp fault-suite/target/lib/*.jar "$run/lib/"
cp fault-suite/target/fault-suite-*.jar "$run/lib/"

flags=(
  --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
  --add-exports=java.base/sun.nio.ch=ALL-UNNAMED
  --add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
  --add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  -Dchronicle.analytics.disable=true
  -Dchronicle.announcer.disable=true
)
# the child JVMs (sluice broker, sluice ingest): Netty's leak detector on every buffer, and native memory tracking
# so that direct memory can be read with jcmd
child=("${flags[@]}" -Dio.netty.leakDetection.level=paranoid -XX:NativeMemoryTracking=summary)
echo "soak.sh: run directory $run (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
set +e
java -Xmx1g "${flags[@]}" -Dio.netty.leakDetection.level=paranoid "-Dsluice.jvm.args=${child[*]}" -cp "$run/lib/*" \
  io.sluice.faults.Soak --run-dir "$run" "$@" 2> >(tee -a "$run/soak.err" >&2) | tee "$run/soak.out"
rc=${PIPESTATUS[0]}
echo "soak.sh: load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); exit $rc" | tee -a "$run/soak.out"
exit "$rc"
