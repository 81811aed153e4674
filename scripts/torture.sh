#!/usr/bin/env bash
# The long run of issue 11's fault-injection suite (module fault-suite): a seeded workload against real processes
# (sluice broker, sluice ingest, ClickHouse, Redis) while a nemesis kills, pauses and cuts them; then a checker
# decides from the history and the final tables. Prints the seed first, faults by kind, events acknowledged, lost
# and duplicated per strategy; exits 1 when a guarantee is violated, 2 on bad arguments.
#
#   scripts/torture.sh --minutes 30 --seed 42
#   scripts/torture.sh --seconds 90 --seed 42 --strategies journal,coalescing --faults BROKER_KILL,CLICKHOUSE_LATE_REQUESTS
#   scripts/torture.sh --help
#
# Run directory (history.jsonl, report.txt, every process's log, the broker's data): fault-suite/target/torture/...
# or $TORTURE_RUN_DIR. The classes are staged into the run directory, so rebuilding while a run goes on is safe.
# DISK_FULL needs root (it mounts a tmpfs for the broker's journal); without root that fault is left out.
set -euo pipefail
cd "$(dirname "$0")/.."

for a in "$@"; do
  if [ "$a" = "--help" ] || [ "$a" = "-h" ]; then
    ./mvnw -B -ntp -q -DskipTests package -pl fault-suite -am >&2
    exec java -cp "fault-suite/target/classes:fault-suite/target/lib/*" io.sluice.faults.Torture --help
  fi
done

echo "torture.sh: building fault-suite ..." >&2
./mvnw -B -ntp -q -DskipTests package -pl fault-suite -am >&2

run="${TORTURE_RUN_DIR:-fault-suite/target/torture/run-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$run/lib"
run="$(cd "$run" && pwd)"
cp fault-suite/target/lib/*.jar "$run/lib/"
cp fault-suite/target/fault-suite-*.jar "$run/lib/"

# Same list as the root pom's sluice.jvm.args (Chronicle Queue on Java 17+, and no telemetry); the child JVMs of the
# run (sluice broker, sluice ingest) get it through -Dsluice.jvm.args.
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
echo "torture.sh: run directory $run (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
set +e
java -Xmx1g "${flags[@]}" "-Dsluice.jvm.args=${flags[*]}" -cp "$run/lib/*" io.sluice.faults.Torture --run-dir "$run" "$@" \
  2> >(tee -a "$run/torture.err" >&2) | tee "$run/torture.out"
rc=${PIPESTATUS[0]}
echo "torture.sh: load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); exit $rc" | tee -a "$run/torture.out"
exit "$rc"
