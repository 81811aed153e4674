package io.sluice.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Consumer-group tooling over a {@link Broker}: list, describe with lag, reset offsets (what Kafka's
 * {@code kafka-consumer-groups.sh} does). Shared by the binary protocol, the HTTP API, {@code /metrics} and
 * {@code /ui}, so every view computes lag the same way. Thread-safe; stateless.
 *
 * <p>Lag of a partition = its end offset minus the committed offset, or minus its start offset when the group never
 * committed there (everything retained is still to be consumed). A committed offset below the start offset (retention
 * removed events the group never read) counts from the start offset.
 */
public final class GroupAdmin {
    private final Broker broker;

    public GroupAdmin(Broker broker) {
        this.broker = broker;
    }

    public List<String> list() {
        return broker.groups().listGroups();
    }

    /** @throws SluiceException with {@link SluiceException.Code#GROUP_NOT_FOUND} if the group does not exist */
    public GroupStatus describe(String groupId) {
        return status(groupId).orElseThrow(() -> new SluiceException(SluiceException.Code.GROUP_NOT_FOUND,
                "unknown group '" + groupId + "' (no live members and no committed offsets)"));
    }

    /** Every group's status, sorted by group id. */
    public List<GroupStatus> describeAll() {
        List<GroupStatus> out = new ArrayList<>();
        for (String id : list()) {
            status(id).ifPresent(out::add);
        }
        return out;
    }

    private Optional<GroupStatus> status(String groupId) {
        Optional<ConsumerGroups.GroupDescription> found = broker.groups().describe(groupId);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        ConsumerGroups.GroupDescription d = found.get();
        Map<TopicPartition, String> owners = new TreeMap<>();
        d.members().forEach((member, assigned) -> assigned.forEach(tp -> owners.put(tp, member)));
        Map<TopicPartition, Long> rows = new TreeMap<>(d.committed());
        Set<String> topics = new java.util.TreeSet<>();
        if (d.topic() != null) {
            topics.add(d.topic());
        } else {
            owners.keySet().forEach(tp -> topics.add(tp.topic())); // a Kafka group reading several topics
        }
        for (String topic : topics) {
            try {
                for (TopicPartition tp : broker.partitionsOf(topic)) {
                    rows.putIfAbsent(tp, -1L);
                }
            } catch (SluiceException.UnknownTopicException deleted) {
                // the topic is gone: show what was committed
            }
        }
        List<GroupStatus.PartitionLag> lags = new ArrayList<>();
        for (Map.Entry<TopicPartition, Long> e : rows.entrySet()) {
            TopicPartition tp = e.getKey();
            if (d.topic() != null && !tp.topic().equals(d.topic())) {
                continue; // offsets of an earlier topic the group consumed: not this group's lag
            }
            long committed = e.getValue();
            long start = -1;
            long end = -1;
            long lag = 0;
            try {
                start = broker.startOffset(tp);
                end = broker.endOffset(tp);
                lag = Math.max(0, end - Math.max(start, committed));
            } catch (SluiceException gone) {
                // unknown topic or partition (deleted): no offsets, no lag
            }
            lags.add(new GroupStatus.PartitionLag(tp.topic(), tp.partition(), committed, start, end, lag, owners.get(tp)));
        }
        Map<String, Set<TopicPartition>> members = new LinkedHashMap<>(d.members());
        return Optional.of(new GroupStatus(groupId, d.topic(), d.generation(), members, lags));
    }

    /**
     * Computes where {@code spec} moves the group on every partition of {@code topic} and, if {@code execute}, commits
     * it. Without {@code execute} nothing changes (a dry run, the default of the CLI).
     *
     * @throws SluiceException.NonEmptyGroupException   when executing while the group has live members
     * @throws SluiceException.UnknownTopicException    if the topic does not exist
     * @throws SluiceException.InvalidConfigException   if the group consumes another topic
     */
    public OffsetResetPlan resetOffsets(String groupId, String topic, OffsetResetSpec spec, boolean execute) {
        Optional<ConsumerGroups.GroupDescription> d = broker.groups().describe(groupId);
        if (d.isPresent() && d.get().topic() != null && !d.get().topic().equals(topic) && !d.get().members().isEmpty()) {
            throw SluiceException.InvalidConfigException.of("--topic", topic,
                    "must be the topic group '" + groupId + "' consumes, '" + d.get().topic() + "'");
        }
        List<OffsetResetPlan.Row> rows = new ArrayList<>();
        for (TopicPartition tp : broker.partitionsOf(topic)) {
            long start = broker.startOffset(tp);
            long end = broker.endOffset(tp);
            long committed = broker.groups().committed(groupId, tp).orElse(-1);
            long target = switch (spec.kind()) {
                case TO_EARLIEST -> start;
                case TO_LATEST -> end;
                case TO_OFFSET -> spec.value();
                case TO_DATETIME -> broker.offsetForTimestamp(tp, spec.value());
                case SHIFT_BY -> saturatedAdd(committed < 0 ? start : committed, spec.value());
            };
            rows.add(new OffsetResetPlan.Row(tp.partition(), committed, Math.max(start, Math.min(end, target)), start, end));
        }
        OffsetResetPlan plan = new OffsetResetPlan(groupId, topic, rows, false);
        if (!execute) {
            return plan;
        }
        broker.groups().resetOffsets(groupId, plan.targets());
        return new OffsetResetPlan(groupId, topic, rows, true);
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? (b < 0 ? Long.MIN_VALUE : Long.MAX_VALUE) : r;
    }
}
