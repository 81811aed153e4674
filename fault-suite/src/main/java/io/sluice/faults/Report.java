package io.sluice.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The checker's verdict on one run, and the figures it is based on. */
public record Report(long seed, Map<String, Integer> faults, long acked, long failed, List<TableResult> tables,
                     long groupLost, List<Long> groupLostExamples, long consumes, long commitsOk, long commitsFailed,
                     List<String> backwardCommits, boolean generationsKnown, List<String> twoOwnersInOneGeneration,
                     long consumerFailures, long healFailures, KafkaResult kafka) {

    /**
     * The Kafka clients' part of a run (null when it had none).
     *
     * @param acked            records the idempotent producer had acknowledged
     * @param failed           sends that failed on the client (outcome unknown)
     * @param records          records in the topic read back after the run
     * @param distinct         distinct ids among them
     * @param lost             acknowledged ids missing from the topic
     * @param duplicated       ids found more than once (acknowledged or not: the idempotent producer writes none twice)
     * @param misplaced        acknowledged ids found, but not at the partition and offset they were acknowledged with
     * @param ambiguous        ids whose send failed on the client but that are in the topic
     * @param complete         the topic was read to its end offsets
     * @param producerFailures producers closed after a fatal error (a new producer id carried on)
     * @param generations      distinct generations the group's members were assigned partitions in
     * @param twoOwners        (generation, partition) pairs owned by more than one member
     */
    public record KafkaResult(long acked, long failed, long records, long distinct, long lost, List<Long> lostExamples,
                              long duplicated, List<Long> duplicatedExamples, List<String> misplaced, long ambiguous,
                              boolean complete, long producerFailures, int generations, long assignments, long reads,
                              long commitsOk, long commitsFailed, long consumerFailures, List<String> twoOwners) {
    }

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
        if (kafka != null) {
            if (!kafka.complete()) {
                v.add("kafka: the topic " + KafkaWorkload.TOPIC + " could not be read back to its end offsets");
            }
            if (kafka.lost() > 0) {
                v.add("kafka: " + kafka.lost() + " acknowledged records lost (e.g. ids " + kafka.lostExamples() + ")");
            }
            if (kafka.duplicated() > 0) {
                v.add("kafka: " + kafka.duplicated() + " records stored twice by an idempotent producer (e.g. ids "
                        + kafka.duplicatedExamples() + ")");
            }
            if (!kafka.misplaced().isEmpty()) {
                v.add("kafka: " + kafka.misplaced().size() + " acknowledged records not where they were acknowledged, first: "
                        + kafka.misplaced().get(0));
            }
            if (!kafka.twoOwners().isEmpty()) {
                v.add("kafka group: " + kafka.twoOwners().size() + " partitions owned by two members of one generation, first: "
                        + kafka.twoOwners().get(0));
            }
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
        if (kafka != null) {
            sb.append(String.format("  kafka        records acknowledged %d, failed on the client %d, read back %d (%s), distinct %d,"
                            + " acknowledged lost %d, duplicated %d, misplaced %d, unacknowledged but stored %d, producers replaced %d%n",
                    kafka.acked(), kafka.failed(), kafka.records(), kafka.complete() ? "to the end" : "INCOMPLETE",
                    kafka.distinct(), kafka.lost(), kafka.duplicated(), kafka.misplaced().size(), kafka.ambiguous(),
                    kafka.producerFailures()));
            sb.append(String.format("  kafka group  generations %d, assignments %d, reads %d, commits ok %d / failed %d,"
                            + " consumer failures %d, two members in one generation %d%n",
                    kafka.generations(), kafka.assignments(), kafka.reads(), kafka.commitsOk(), kafka.commitsFailed(),
                    kafka.consumerFailures(), kafka.twoOwners().size()));
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
