/**
 * Issue 11's fault-injection suite, in the style of Jepsen: a seeded {@link io.sluice.faults.Workload} (producers
 * with unique ids, consumers in a group, ingest into ClickHouse through several strategies) runs against real
 * processes ({@link io.sluice.faults.Cluster}) while a {@link io.sluice.faults.Nemesis} injects faults at seeded
 * times; every invocation and outcome goes to a {@link io.sluice.faults.History} (JSON lines in the run directory),
 * and a {@link io.sluice.faults.Checker} decides from that history and the final ClickHouse tables alone.
 * {@link io.sluice.faults.Torture} is the entry point of {@code scripts/torture.sh}.
 */
package io.sluice.faults;
