package io.sluice.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The checker's verdict on one run, and the figures it is based on. */
public record Report(long seed, Map<String, Integer> faults, long acked, long failed, List<TableResult> tables,
                     long groupLost, List<Long> groupLostExamples, long consumes, long commitsOk, long commitsFailed,
                     List<String> backwardCommits, boolean generationsKnown, List<String> twoOwnersInOneGeneration,
                     long consumerFailures, long healFailures) {

    /**
     * One strategy's table.
     *
     * @param rows       rows in the table
     * @param distinct   distinct ids in the table
     * @param lost       acknowledged ids missing from it
     * @param duplicated rows beyond one per id
     * @param ambiguous  ids whose send failed on the client (outcome unknown) but that landed
     */
    public record TableResult(String strategy, String table, boolean exactlyOnce, long rows, long distinct, long lost,
                              long duplicated, long ambiguous, List<Long> lostExamples) {
    }

    /** Every broken guarantee, in words; empty when the run passed. */
    public List<String> violations() {
        List<String> v = new ArrayList<>();
        for (TableResult t : tables) {
            if (t.lost() > 0) {
                v.add(t.strategy() + ": " + t.lost() + " acknowledged events lost (e.g. ids " + t.lostExamples() + ")");
            }
            if (t.exactlyOnce() && t.duplicated() > 0) {
                v.add(t.strategy() + ": " + t.duplicated() + " duplicated rows where exactly-once is stated");
            }
        }
        if (groupLost > 0) {
            v.add("group: " + groupLost + " acknowledged events never consumed (e.g. ids " + groupLostExamples + ")");
        }
        if (!backwardCommits.isEmpty()) {
            v.add("group: " + backwardCommits.size() + " committed offsets went backwards, first: " + backwardCommits.get(0));
        }
        if (!twoOwnersInOneGeneration.isEmpty()) {
            v.add("group: " + twoOwnersInOneGeneration.size() + " partitions processed by two members of one generation, first: "
                    + twoOwnersInOneGeneration.get(0));
        }
        return v;
    }

    public boolean passed() {
        return violations().isEmpty();
    }

    /** The run's summary as printed by {@code scripts/torture.sh}. */
    public String format() {
        StringBuilder sb = new StringBuilder();
        sb.append("seed ").append(seed).append('\n');
        sb.append("faults injected: ").append(faults.values().stream().mapToInt(Integer::intValue).sum()).append(' ').append(faults).append('\n');
        sb.append("events acknowledged ").append(acked).append(", failed on the client (outcome unknown) ").append(failed).append('\n');
        for (TableResult t : tables) {
            sb.append(String.format("  %-12s %-9s rows %d, distinct ids %d, acknowledged lost %d, duplicated %d, unacknowledged but landed %d%n",
                    t.strategy(), t.exactlyOnce() ? "[exactly]" : "[at-least]", t.rows(), t.distinct(), t.lost(),
                    t.duplicated(), t.ambiguous()));
        }
        if (groupLost >= 0) {
            sb.append("  group        records consumed ").append(consumes).append(", acknowledged never consumed ").append(groupLost)
                    .append(", commits ok ").append(commitsOk).append(" / failed ").append(commitsFailed)
                    .append(", backwards ").append(backwardCommits.size())
                    .append(", two members in one generation ")
                    .append(generationsKnown ? Integer.toString(twoOwnersInOneGeneration.size()) : "not checkable (no generations reported)")
                    .append(", consumer failures ").append(consumerFailures).append('\n');
        }
        if (healFailures > 0) {
            sb.append("  heal failures ").append(healFailures).append('\n');
        }
        List<String> v = violations();
        sb.append(v.isEmpty() ? "PASS" : "FAIL: " + v.size() + " violations").append('\n');
        v.forEach(x -> sb.append("  - ").append(x).append('\n'));
        return sb.toString();
    }
}
