package io.sluice.ingest.internal;

import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Header;
import io.sluice.core.TopicPartition;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A Kafka consumer seen through Sluice's {@link Consumer} interface, so that the offset-range strategy lands a Kafka
 * topic exactly as it lands a Sluice topic. <b>Not thread-safe</b>, like both consumers it joins: one thread polls.
 *
 * <p>A commit that Kafka refuses because the group is rebalancing (or this member was removed) is logged and
 * dropped, not thrown: the partitions' new owner starts from the last committed offset and, with offset columns,
 * skips the rows already in ClickHouse — the same rule as after a crash.
 */
public final class KafkaTopicConsumer implements Consumer {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaTopicConsumer.class);

    private final KafkaConsumer<byte[], byte[]> kafka;
    private boolean closed;

    public KafkaTopicConsumer(String bootstrap, ConsumerConfig config, Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>(overrides);
        props.put("bootstrap.servers", bootstrap);
        props.put("client.id", config.clientId());
        if (config.groupId() != null) {
            props.put("group.id", config.groupId());
        }
        props.put("enable.auto.commit", "false");
        props.put("isolation.level", "read_committed");
        props.put("auto.offset.reset", config.offsetReset().name().toLowerCase(Locale.ROOT));
        props.put("max.poll.records", config.maxPollRecords());
        props.put("fetch.max.bytes", config.maxPollBytes());
        props.putIfAbsent("session.timeout.ms", (int) Math.max(6_000, Math.min(config.sessionTimeoutMillis(), 60_000)));
        this.kafka = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private static org.apache.kafka.common.TopicPartition toKafka(TopicPartition tp) {
        return new org.apache.kafka.common.TopicPartition(tp.topic(), tp.partition());
    }

    private static Set<org.apache.kafka.common.TopicPartition> toKafka(Set<TopicPartition> tps) {
        return tps.stream().map(KafkaTopicConsumer::toKafka).collect(Collectors.toSet());
    }

    @Override
    public void assign(Set<TopicPartition> partitions) {
        kafka.assign(toKafka(partitions));
    }

    @Override
    public void subscribe(String topic) {
        kafka.subscribe(List.of(topic));
    }

    @Override
    public Set<TopicPartition> assignment() {
        return kafka.assignment().stream().map(tp -> new TopicPartition(tp.topic(), tp.partition())).collect(Collectors.toSet());
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        kafka.seek(toKafka(partition), offset);
    }

    @Override
    public void seekToBeginning(Set<TopicPartition> partitions) {
        kafka.seekToBeginning(toKafka(partitions));
    }

    @Override
    public void seekToEnd(Set<TopicPartition> partitions) {
        kafka.seekToEnd(toKafka(partitions));
    }

    @Override
    public void seekToTimestamp(TopicPartition partition, long epochMillis) {
        org.apache.kafka.common.TopicPartition tp = toKafka(partition);
        OffsetAndTimestamp found = kafka.offsetsForTimes(Map.of(tp, epochMillis)).get(tp);
        if (found == null) {
            kafka.seekToEnd(Set.of(tp));
        } else {
            kafka.seek(tp, found.offset());
        }
    }

    @Override
    public long position(TopicPartition partition) {
        return kafka.position(toKafka(partition));
    }

    @Override
    public List<ConsumerRecord> poll(Duration timeout) {
        var records = kafka.poll(timeout);
        List<ConsumerRecord> out = new ArrayList<>(records.count());
        for (var r : records) {
            List<Header> headers = new ArrayList<>(0);
            for (var h : r.headers()) {
                headers.add(new Header(h.key(), h.value()));
            }
            // a tombstone (null value) is not a JSON object: the offset-range strategy dead-letters it rather than failing
            out.add(new ConsumerRecord(r.topic(), r.partition(), r.offset(), r.timestamp(), r.key(),
                    r.value() == null ? new byte[0] : r.value(), headers));
        }
        return out;
    }

    @Override
    public void commitSync() {
        commit(() -> kafka.commitSync());
    }

    @Override
    public void commitSync(Map<TopicPartition, Long> offsets) {
        Set<org.apache.kafka.common.TopicPartition> owned = kafka.assignment();
        Map<org.apache.kafka.common.TopicPartition, OffsetAndMetadata> commits = new HashMap<>();
        offsets.forEach((tp, next) -> {
            org.apache.kafka.common.TopicPartition k = toKafka(tp);
            if (owned.contains(k)) {
                commits.put(k, new OffsetAndMetadata(next));
            }
        });
        if (!commits.isEmpty()) {
            commit(() -> kafka.commitSync(commits));
        }
    }

    private void commit(Runnable commit) {
        try {
            commit.run();
        } catch (CommitFailedException | RebalanceInProgressException e) {
            LOG.warn("Kafka commit refused during a rebalance; the partitions' next owner resumes from the last commit: {}", e.toString());
        }
    }

    @Override
    public long skippedByRetention() {
        return 0; // Kafka resets a lost position per auto.offset.reset and logs it; it does not count skipped offsets
    }

    /** Kafka's group generation is not exposed through this interface: empty (the offset-range strategy does not need it). */
    @Override
    public java.util.Optional<io.sluice.core.ConsumerGroups.Membership> groupMembership() {
        return java.util.Optional.empty();
    }

    @Override
    public OptionalLong committed(TopicPartition partition) {
        org.apache.kafka.common.TopicPartition tp = toKafka(partition);
        OffsetAndMetadata c = kafka.committed(Set.of(tp)).get(tp);
        return c == null ? OptionalLong.empty() : OptionalLong.of(c.offset());
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            kafka.close(Duration.ofSeconds(10));
        }
    }
}
