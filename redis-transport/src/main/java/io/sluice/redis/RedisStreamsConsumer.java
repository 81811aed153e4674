package io.sluice.redis;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.ClosedException;
import io.sluice.core.TopicPartition;
import io.sluice.redis.internal.EntryIds;
import io.sluice.redis.internal.GroupInfo;
import io.sluice.redis.internal.StreamFields;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link Consumer} over Redis streams. <b>Not thread-safe</b>: one thread polls it.
 *
 * <p><b>In a group</b> ({@link #subscribe}, with {@link ConsumerConfig#groupId()}): the consumer is a member
 * {@code <clientId>-<random>} of the Redis consumer group {@code groupId} on every stream of the topic (created with
 * {@code MKSTREAM} at {@code 0} for {@link OffsetReset#EARLIEST}, at {@code $} otherwise). {@link #poll} is
 * {@code XREADGROUP GROUP <group> <member> COUNT <maxPollRecords> BLOCK <timeout> STREAMS <keys> > ...}: Redis wakes
 * the blocked read when an entry arrives. Every member reads every partition; Redis shares the entries out.
 *
 * <p><b>Committed</b> means acknowledged: {@link #commitSync()} sends {@code XACK} for every entry this member was
 * given and waits for the reply; {@link #commitAsync()} sends the same {@code XACK} pipelined in front of the next
 * read. An entry delivered but not acknowledged stays in the group's pending list; once it has been idle for
 * {@code claimIdleMillis} (its member died, stalled or skipped it) the next member to poll claims it with
 * {@code XAUTOCLAIM} and gets it again ({@code ConsumerTakeoverTest}). An entry claimed after {@code maxDeliveries}
 * deliveries is appended to the topic's dead-letter stream and acknowledged instead ({@code DeadLetterTest}). Claims
 * go through a {@link GroupReader} per partition (redis-transport's one claim path, shared with ingest), on a second
 * connection; dead letters are in {@link DeadLetterStream}'s format.
 * Delivery is at-least-once.
 *
 * <p><b>Offsets.</b> {@link ConsumerRecord#offset()} is the entry id as a long ({@code ms << 22 | seq}), so offsets
 * grow with ids but are not dense; {@link #entryId(ConsumerRecord)} gives the id itself. {@link #committed} is the group's
 * floor: its oldest pending entry, or the entry after its last-delivered id. In a group, {@code seek*} move the whole
 * group ({@code XGROUP SETID}).
 *
 * <p><b>Without a group</b> ({@link #assign}), the consumer reads with {@code XREAD} from its own positions, and
 * commits are refused.
 *
 * <p><b>Redis Cluster</b> ({@link RedisStreamsConfig#cluster()}): the topic's streams share its hash tag, so the one
 * {@code XREADGROUP} over every partition is a single-slot command; commands are flushed one by one there (a command
 * the cluster redirects is re-sent through this connection, which would otherwise hold it until the next flush).
 *
 * <p>Bounds: a poll returns at most {@code maxPollRecords}; a member holds at most 64 × {@code maxPollRecords}
 * uncommitted entries, after which {@code poll} fails with {@link SluiceException.BackPressureException} until it
 * commits.
 */
public final class RedisStreamsConsumer implements Consumer {
    private static final Logger LOG = LoggerFactory.getLogger(RedisStreamsConsumer.class);

    private final RedisStreamsConfig config;
    private final ConsumerConfig consumerConfig;
    private final RedisEndpoint endpoint;
    private final RedisEndpoint.Link link;
    private final io.lettuce.core.api.StatefulConnection<byte[], byte[]> connection;
    private final RedisClusterAsyncCommands<byte[], byte[]> redis;
    private final String memberName;
    private final int maxUncommitted;

    private String topic;
    private boolean grouped;
    private byte[] group;
    private io.lettuce.core.Consumer<byte[]> member;
    private final List<TopicPartition> partitions = new ArrayList<>();
    private byte[][] keys = new byte[0][];
    /** Assign mode: the last id read per partition (XREAD continues after it). */
    private String[] positions = new String[0];
    /** Group mode: ids delivered to this member and not yet acknowledged, per partition. */
    private List<List<String>> uncommitted = new ArrayList<>();
    private int uncommittedCount;
    /** Ids queued by commitAsync, sent in front of the next read. */
    private List<List<String>> queuedAcks = new ArrayList<>();
    private final List<RedisFuture<Long>> ackReplies = new ArrayList<>();
    private SluiceException asyncCommitFailure;
    private String[] claimCursors = new String[0];
    /** Group mode: one per partition, the claim path, on {@link #claimLink} (opened by subscribe). */
    private GroupReader[] claimers = new GroupReader[0];
    private RedisEndpoint.Link claimLink;
    private DeadLetterStream deadLetters;
    private long nextClaimNanos;
    /** When the oldest commitAsync acknowledgement still held back was queued (System.nanoTime), or -1. */
    private long asyncAcksSinceNanos = -1;
    private int asyncAcksQueued;
    private long deadLettered;
    private long claimed;
    private boolean closed;

    public RedisStreamsConsumer(RedisStreamsConfig config, ConsumerConfig consumerConfig) {
        this.config = config;
        this.consumerConfig = consumerConfig;
        this.memberName = consumerConfig.clientId() + "-" + UUID.randomUUID().toString().substring(0, 8);
        this.maxUncommitted = consumerConfig.maxPollRecords() * 64;
        this.endpoint = new RedisEndpoint(config, "consumer-" + consumerConfig.clientId(), false);
        this.link = endpoint.connect();
        this.connection = link.connection();
        // commands are flushed explicitly so that queued XACKs travel with the next read; on a cluster each at once, as
        // the client re-sends a command redirected by MOVED/ASK through this connection, which would hold it unflushed
        connection.setAutoFlushCommands(config.cluster());
        this.redis = link.async();
    }

    /** This member's name in the Redis consumer group. */
    public String memberName() {
        return memberName;
    }

    @Override
    public void assign(Set<TopicPartition> assigned) {
        requireOpen();
        requireSingleTopic(assigned);
        grouped = false;
        setPartitions(assigned);
        positions = new String[keys.length];
        for (int i = 0; i < keys.length; i++) {
            positions[i] = consumerConfig.offsetReset() == OffsetReset.EARLIEST ? "0-0" : lastId(keys[i]);
        }
    }

    @Override
    public void subscribe(String topic) {
        requireOpen();
        if (consumerConfig.groupId() == null) {
            throw SluiceException.InvalidConfigException.of("groupId", null, "is required to subscribe");
        }
        Set<TopicPartition> all = new LinkedHashSet<>();
        for (int p = 0; p < config.partitions(); p++) {
            all.add(new TopicPartition(topic, p));
        }
        grouped = true;
        group = consumerConfig.groupId().getBytes(StandardCharsets.UTF_8);
        member = io.lettuce.core.Consumer.from(group, memberName.getBytes(StandardCharsets.UTF_8));
        setPartitions(all);
        String start = consumerConfig.offsetReset() == OffsetReset.EARLIEST ? "0" : "$";
        for (byte[] key : keys) {
            try {
                await(redis.xgroupCreate(XReadArgs.StreamOffset.from(key, start), group, XGroupCreateArgs.Builder.mkstream(true)));
            } catch (SluiceException e) {
                if (!(e.getCause() instanceof RedisBusyException)) {
                    throw e;
                }
                // BUSYGROUP: the group exists already; its position stands
            }
        }
        claimCursors = new String[keys.length];
        Arrays.fill(claimCursors, "0-0");
        // claims, with their XPENDING and dead letters, are synchronous and rare (every claimIntervalMillis): on a
        // connection of their own, so they never sit between this connection's pipelined XACKs and reads
        closeClaimers();
        claimLink = endpoint.connect();
        claimers = new GroupReader[keys.length];
        for (int i = 0; i < keys.length; i++) {
            claimers[i] = new GroupReader(claimLink, new String(keys[i], StandardCharsets.UTF_8), consumerConfig.groupId(), memberName);
        }
        deadLetters = new DeadLetterStream(endpoint, config.deadLetterKey(topic));
        nextClaimNanos = System.nanoTime();
    }

    private void setPartitions(Set<TopicPartition> assigned) {
        partitions.clear();
        partitions.addAll(assigned);
        if (!assigned.isEmpty()) {
            topic = partitions.get(0).topic();
        }
        keys = new byte[partitions.size()][];
        uncommitted = new ArrayList<>();
        queuedAcks = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            TopicPartition tp = partitions.get(i);
            if (tp.partition() >= config.partitions()) {
                throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "partition " + tp + " does not exist (partitions=" + config.partitions() + ")");
            }
            keys[i] = config.streamKey(tp.topic(), tp.partition()).getBytes(StandardCharsets.UTF_8);
            uncommitted.add(new ArrayList<>());
            queuedAcks.add(new ArrayList<>());
        }
        uncommittedCount = 0;
    }

    private static void requireSingleTopic(Set<TopicPartition> assigned) {
        if (assigned.stream().map(TopicPartition::topic).distinct().count() > 1) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "a Redis Streams consumer reads one topic, got " + assigned);
        }
    }

    @Override
    public Set<TopicPartition> assignment() {
        return Set.copyOf(partitions);
    }

    @Override
    public List<ConsumerRecord> poll(Duration timeout) {
        requireOpen();
        if (keys.length == 0) {
            return List.of();
        }
        if (grouped) {
            if (uncommittedCount >= maxUncommitted) {
                throw new SluiceException.BackPressureException(uncommittedCount + " entries delivered and not committed (limit "
                        + maxUncommitted + " = 64 × maxPollRecords): commit before polling more");
            }
            if (System.nanoTime() - nextClaimNanos >= 0) {
                nextClaimNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.claimIntervalMillis());
                List<ConsumerRecord> reclaimed = reclaim();
                if (!reclaimed.isEmpty()) {
                    return reclaimed;
                }
            }
        }
        long blockMillis = timeout.toMillis();
        XReadArgs args = XReadArgs.Builder.count(consumerConfig.maxPollRecords());
        if (blockMillis > 0) {
            args.block(blockMillis);
        }
        @SuppressWarnings("unchecked")
        XReadArgs.StreamOffset<byte[]>[] offsets = new XReadArgs.StreamOffset[keys.length];
        for (int i = 0; i < keys.length; i++) {
            offsets[i] = grouped ? XReadArgs.StreamOffset.lastConsumed(keys[i]) : XReadArgs.StreamOffset.from(keys[i], positions[i]);
        }
        if (asyncAcksDue()) {
            sendQueuedAcks();
        }
        RedisFuture<List<StreamMessage<byte[], byte[]>>> read = grouped ? redis.xreadgroup(member, args, offsets) : redis.xread(args, offsets);
        connection.flushCommands();
        List<StreamMessage<byte[], byte[]>> messages = await(read, blockMillis);
        checkAckReplies();
        if (messages == null || messages.isEmpty()) {
            return List.of();
        }
        List<ConsumerRecord> records = new ArrayList<>(messages.size());
        for (StreamMessage<byte[], byte[]> m : messages) {
            int i = indexOf(m.getStream());
            if (m.getBody() == null) {
                continue;
            }
            records.add(StreamFields.decode(topic, partitions.get(i).partition(), m));
            if (grouped) {
                uncommitted.get(i).add(m.getId());
                uncommittedCount++;
            } else {
                positions[i] = m.getId();
            }
        }
        return records;
    }

    /**
     * Claims entries idle past claimIdleMillis (their member died or skipped them) through each partition's
     * {@link GroupReader}, the one claim path: an entry delivered more than maxDeliveries times is given up to the
     * dead-letter stream and acknowledged there instead of returned.
     */
    private List<ConsumerRecord> reclaim() {
        List<ConsumerRecord> records = new ArrayList<>();
        for (int i = 0; i < keys.length && records.size() < consumerConfig.maxPollRecords(); i++) {
            GroupReader claimer = claimers[i];
            claimer.open();
            GroupReader.Claimed result = claimer.claimIdle(claimCursors[i], config.claimIdleMillis(),
                    consumerConfig.maxPollRecords() - records.size(), config.maxDeliveries(), deadLetters);
            claimCursors[i] = result.cursor();
            deadLettered += result.deadLetteredEntries();
            for (StreamEntry e : result.entries()) {
                claimed++;
                records.add(StreamFields.decode(topic, partitions.get(i).partition(), e.id(), e.fields()));
                uncommitted.get(i).add(e.id());
                uncommittedCount++;
            }
        }
        return records;
    }

    private int indexOf(byte[] stream) {
        for (int i = 0; i < keys.length; i++) {
            if (Arrays.equals(keys[i], stream)) {
                return i;
            }
        }
        throw new IllegalStateException("entry from a stream not read: " + new String(stream, StandardCharsets.UTF_8));
    }

    /** Acknowledges every entry this member was given ({@code XACK}) and waits for Redis. */
    @Override
    public void commitSync() {
        requireGroup();
        queueAll();
        commitQueued();
    }

    /** Acknowledges the given partitions' delivered entries below each next-offset. */
    @Override
    public void commitSync(Map<TopicPartition, Long> offsets) {
        requireGroup();
        for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
            int i = partitions.indexOf(e.getKey());
            if (i < 0) {
                throw new SluiceException(SluiceException.Code.INVALID_REQUEST, e.getKey() + " is not assigned");
            }
            long next = e.getValue();
            List<String> ids = uncommitted.get(i);
            for (int j = ids.size() - 1; j >= 0; j--) {
                if (EntryIds.toOffset(ids.get(j)) < next) {
                    queuedAcks.get(i).add(ids.remove(j));
                    uncommittedCount--;
                }
            }
        }
        commitQueued();
    }

    /**
     * The Redis stream entry id ({@code "1718000000000-3"}) of a record this consumer returned: its offset is the id
     * as a long ({@code ms << 22 | seq}), so the id is recovered exactly. Redis ids stay out of the transport-neutral
     * {@link ConsumerRecord}.
     */
    public static String entryId(ConsumerRecord record) {
        return EntryIds.toId(record.offset());
    }

    /**
     * Acknowledges exactly these records (Redis acknowledges entries one by one: a record left out stays pending and is
     * claimed again after {@code claimIdleMillis}, then dead-lettered after {@code maxDeliveries}).
     */
    public void commitSync(Collection<ConsumerRecord> records) {
        requireGroup();
        for (ConsumerRecord r : records) {
            int i = partitions.indexOf(r.topicPartition());
            if (i < 0) {
                throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "record " + r.topicPartition() + "@" + r.offset() + " was not read by this consumer");
            }
            String id = entryId(r);
            if (uncommitted.get(i).remove(id)) {
                uncommittedCount--;
                queuedAcks.get(i).add(id);
            }
        }
        commitQueued();
    }

    /**
     * Queues an {@code XACK} of every entry given so far; it is sent in front of the next {@link #poll} (in the same
     * write) — or, with {@code asyncCommitLingerMillis > 0}, in front of the first read after that long (or once a
     * poll's worth is queued), one XACK for many polls — or by {@link #commitSync} or {@link #close}. A failure is
     * thrown by the next {@link #commitSync} or poll. Entries not yet acknowledged are redelivered if this member dies.
     */
    public void commitAsync() {
        requireGroup();
        if (uncommittedCount > 0 && asyncAcksSinceNanos < 0) {
            asyncAcksSinceNanos = System.nanoTime();
        }
        asyncAcksQueued += uncommittedCount;
        queueAll();
    }

    private void queueAll() {
        for (int i = 0; i < keys.length; i++) {
            queuedAcks.get(i).addAll(uncommitted.get(i));
            uncommitted.get(i).clear();
        }
        uncommittedCount = 0;
    }

    /**
     * Sends the queued XACKs and waits for every outstanding one. A failed XACK is thrown (after all were awaited, so
     * the next commit starts clean); its entries stay pending in the group and are claimed again after
     * {@code claimIdleMillis} (at-least-once).
     */
    private void commitQueued() {
        sendQueuedAcks();
        connection.flushCommands();
        checkAckReplies();
    }

    /**
     * Whether the acknowledgements queued by {@link #commitAsync} go out with this read: always with
     * {@code asyncCommitLingerMillis = 0}; otherwise once the oldest has waited that long or a poll's worth is queued.
     */
    private boolean asyncAcksDue() {
        if (asyncAcksSinceNanos < 0) {
            return true;
        }
        return config.asyncCommitLingerMillis() == 0 || asyncAcksQueued >= consumerConfig.maxPollRecords()
                || System.nanoTime() - asyncAcksSinceNanos >= TimeUnit.MILLISECONDS.toNanos(config.asyncCommitLingerMillis());
    }

    private void sendQueuedAcks() {
        asyncAcksSinceNanos = -1;
        asyncAcksQueued = 0;
        for (int i = 0; i < keys.length; i++) {
            List<String> ids = queuedAcks.get(i);
            if (!ids.isEmpty()) {
                ackReplies.add(redis.xack(keys[i], group, ids.toArray(new String[0])));
                ids.clear();
            }
        }
    }

    private void checkAckReplies() {
        for (RedisFuture<Long> f : ackReplies) {
            try {
                await(f);
            } catch (SluiceException e) {
                if (asyncCommitFailure == null) {
                    asyncCommitFailure = e;
                }
            }
        }
        ackReplies.clear();
        throwAsyncFailure();
    }

    private void throwAsyncFailure() {
        SluiceException e = asyncCommitFailure;
        if (e != null) {
            asyncCommitFailure = null;
            throw e;
        }
    }

    /** The group's floor for that partition: its oldest unacknowledged entry, or the one after its last-delivered id. */
    /**
     * Always 0: Redis trims a stream by id or length, not by age, and this transport's trimming never passes a
     * group's oldest pending entry unless the producer opted in ({@code TrimmingTest}); entries trimmed under that
     * opt-in are not counted here.
     */
    @Override
    public long skippedByRetention() {
        return 0;
    }

    /**
     * Empty: a Redis consumer group has no generations or partition assignment (every member may be handed any
     * entry; a dead member's pending entries are claimed with {@code XAUTOCLAIM}), so there is no membership to fence.
     */
    @Override
    public java.util.Optional<io.sluice.core.ConsumerGroups.Membership> groupMembership() {
        return java.util.Optional.empty();
    }

    @Override
    public OptionalLong committed(TopicPartition partition) {
        requireGroup();
        int i = indexOfPartition(partition);
        RedisEndpoint.Link sync = endpoint.connect();
        try {
            for (GroupInfo g : GroupInfo.list(sync.sync(), keys[i])) {
                if (Arrays.equals(g.name(), group)) {
                    return OptionalLong.of(g.floor(sync.sync(), keys[i]));
                }
            }
            return OptionalLong.empty();
        } finally {
            sync.close();
        }
    }

    @Override
    public long position(TopicPartition partition) {
        int i = indexOfPartition(partition);
        if (!grouped) {
            return EntryIds.toOffset(positions[i]) + 1;
        }
        RedisEndpoint.Link sync = endpoint.connect();
        try {
            for (GroupInfo g : GroupInfo.list(sync.sync(), keys[i])) {
                if (Arrays.equals(g.name(), group)) {
                    return g.lastDelivered() + 1;
                }
            }
            return 0;
        } finally {
            sync.close();
        }
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        moveTo(indexOfPartition(partition), offset <= 0 ? "0-0" : EntryIds.toId(offset - 1));
    }

    @Override
    public void seekToBeginning(Set<TopicPartition> ps) {
        for (TopicPartition p : ps) {
            moveTo(indexOfPartition(p), "0-0");
        }
    }

    @Override
    public void seekToEnd(Set<TopicPartition> ps) {
        for (TopicPartition p : ps) {
            int i = indexOfPartition(p);
            moveTo(i, lastId(keys[i]));
        }
    }

    @Override
    public void seekToTimestamp(TopicPartition partition, long epochMillis) {
        long first = EntryIds.firstOffsetAt(epochMillis);
        moveTo(indexOfPartition(partition), first <= 0 ? "0-0" : EntryIds.toId(first - 1));
    }

    /** Group: {@code XGROUP SETID} (moves every member); assign: the local position. Reads continue after {@code id}. */
    private void moveTo(int i, String id) {
        requireOpen();
        if (grouped) {
            await(redis.xgroupSetid(XReadArgs.StreamOffset.from(keys[i], id), group));
        } else {
            positions[i] = id;
        }
    }

    private String lastId(byte[] key) {
        List<StreamMessage<byte[], byte[]>> last = await(redis.xrevrange(key, Range.create("-", "+"), Limit.from(1)));
        return last.isEmpty() ? "0-0" : last.get(0).getId();
    }

    private int indexOfPartition(TopicPartition p) {
        int i = partitions.indexOf(p);
        if (i < 0) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, p + " is not assigned to this consumer");
        }
        return i;
    }

    /** Entries this member claimed from others (or from itself) after they idled past claimIdleMillis. */
    public long claimedEntries() {
        return claimed;
    }

    /** Entries this member moved to the dead-letter stream. */
    public long deadLetteredEntries() {
        return deadLettered;
    }

    private void requireGroup() {
        requireOpen();
        if (!grouped) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "commits need a group: subscribe with ConsumerConfig.groupId");
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new ClosedException("consumer closed");
        }
    }

    private <T> T await(Future<T> f) {
        return await(f, 0);
    }

    private <T> T await(Future<T> f, long extraMillis) {
        if (f instanceof RedisFuture<?>) {
            connection.flushCommands();
        }
        try {
            return f.get(config.commandTimeoutMillis() + extraMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw new SluiceException(SluiceException.Code.UNKNOWN, "Redis command failed: " + c.getMessage(), c);
        } catch (CancellationException e) {
            // Lettuce cancels commands it will not re-send when the connection drops
            throw new SluiceException(SluiceException.Code.UNKNOWN, "Redis command cancelled (connection lost); entries it may have delivered stay pending and are claimed again", e);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new SluiceException(SluiceException.Code.TIMEOUT, "no reply from Redis within " + (config.commandTimeoutMillis() + extraMillis) + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SluiceException(SluiceException.Code.UNKNOWN, "interrupted while waiting for Redis", e);
        }
    }

    private void closeClaimers() {
        for (GroupReader r : claimers) {
            r.close();
        }
        claimers = new GroupReader[0];
        if (claimLink != null) {
            claimLink.close();
            claimLink = null;
        }
        if (deadLetters != null) {
            deadLetters.close();
            deadLetters = null;
        }
    }

    /** Sends any queued {@link #commitAsync} acknowledgements, then closes. Uncommitted entries stay pending (claimable). */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            if (grouped) {
                commitQueued();
            }
        } catch (SluiceException e) {
            LOG.warn("closing {}: queued acknowledgements failed ({}); those entries stay pending and will be claimed again",
                    memberName, e.getMessage());
        } finally {
            closed = true;
            closeClaimers();
            link.close();
            endpoint.close();
        }
    }
}
