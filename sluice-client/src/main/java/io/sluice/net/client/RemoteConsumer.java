package io.sluice.net.client;

import io.netty.buffer.ByteBuf;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerGroups;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.SluiceException;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.internal.ClientConnection;
import io.sluice.net.client.internal.Connector;
import io.sluice.net.protocol.ApiKey;
import io.sluice.net.protocol.Fetch;
import io.sluice.net.protocol.Groups;
import io.sluice.net.protocol.ListOffsets;
import io.sluice.net.protocol.OffsetCommit;
import io.sluice.net.protocol.OffsetFetch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * A {@link Consumer} that reads from a Sluice broker over the network, with the embedded consumer's semantics:
 * <pre>{@code
 * Consumer consumer = broker.newConsumer(config);                            // embedded
 * Consumer consumer = new RemoteConsumer("127.0.0.1:7070", config);          // networked
 * }</pre>
 *
 * <p><b>Not thread-safe</b>: one thread polls, as with the embedded consumer. Group membership maps onto the
 * broker's core {@code ConsumerGroups}: {@link #subscribe} joins, {@link #poll} heartbeats every third of the
 * session timeout (at most every second) with its member id and generation. When the group rebalances it drops every
 * partition (and any prefetched records), rejoins, and starts the new generation's partitions from their committed
 * offsets (else {@code offsetReset}); {@link #close} leaves. A member whose session ran out between its join and the
 * committed-offset lookups of its new partitions (its thread or its requests held past the session timeout) takes
 * nothing and joins again at the next poll, as after a heartbeat refused for expiry; {@code subscribe} does not fail. After each poll that returned records the consumer prefetches the next records (a fetch
 * that does not wait, from the end of what it has buffered), so a busy consumer overlaps the network round trip with
 * the application's work. A consumer that reads at offsets of its own choosing ({@link #seek} before each poll) does
 * not: once a seek abandoned a prefetch, a poll after a seek does not prefetch, and the first poll that reads on
 * without a seek starts prefetching again.
 *
 * <p>Fetches use FETCH version 1: the broker ships its stored record batches unchanged, and this consumer checks each
 * batch's framing and CRC32C (record-batch's {@link io.sluice.records.RecordBatchReader}) before decoding it, skipping the
 * records before the offset it asked for. A damaged batch is a {@link SluiceException.CorruptRecordException}
 * naming the partition and the offset, thrown by {@link #poll} once the records before it were returned.
 */
public final class RemoteConsumer implements Consumer {
    private static final Logger LOG = LoggerFactory.getLogger(RemoteConsumer.class);
    /**
     * Longest single long-poll: the broker's default cap ({@code max.fetch.wait.ms}); a broker with a lower cap answers
     * sooner and the poll asks again. A poll waits in one fetch for as long as it may (its timeout, or, in a group,
     * until the next heartbeat is due), so an idle consumer costs one round trip per poll or per heartbeat interval,
     * not one every few hundred milliseconds. Records are answered as soon as they are appended, however long the wait.
     */
    private static final long MAX_FETCH_WAIT_MILLIS = 30_000;
    private static final long MAX_HEARTBEAT_INTERVAL_MILLIS = 1_000;
    /** while a rebalance is pending the consumer rejoins this often (each rejoin keeps its session alive) */
    private static final long PENDING_REJOIN_NANOS = 50_000_000L;

    private final ConsumerConfig config;
    private final Connector connector;
    private final long requestTimeoutMillis;
    private final Set<TopicPartition> assignment = new TreeSet<>();
    private final Map<TopicPartition, Long> positions = new HashMap<>();
    /** per partition with buffered records: the offset after the last of them, where the next fetch starts */
    private final Map<TopicPartition, Long> fetchPositions = new HashMap<>();
    /** Fetched records not yet returned by poll: one run of consecutive offsets of one partition per fetched partition. */
    private final ArrayDeque<Run> buffer = new ArrayDeque<>();
    private CompletableFuture<Fetch.Response> inFlightFetch;
    /**
     * A seek abandoned a prefetch: this consumer reads at offsets of its own choosing, and a prefetch would be read,
     * shipped and decoded only to be dropped, while the next fetch waits behind it on the connection. Polls do not
     * prefetch until one returns records with no seek since the previous one (the consumer reads on).
     */
    private boolean prefetchWasted;
    /** a seek came after the last poll that returned records */
    private boolean seekedSinceRecords;
    /** the long-poll wait the in-flight fetch asked for: awaiting its answer allows that plus the request timeout */
    private long inFlightWaitMillis;
    private String subscribedTopic;
    private String memberId;
    private int generation = ConsumerGroups.NO_GENERATION;
    /** joined, waiting for the rebalance to complete */
    private boolean pending;
    private long skippedByRetention;
    private long lastHeartbeatNanos;
    private boolean closed;

    public RemoteConsumer(String bootstrap, ConsumerConfig config) {
        this(ClientConfig.builder(bootstrap).clientId(config.clientId()).build(), config);
    }

    public RemoteConsumer(ClientConfig client, ConsumerConfig config) {
        this.config = config;
        this.connector = new Connector(client, "consumer");
        this.requestTimeoutMillis = client.requestTimeoutMillis();
        try {
            connector.connected();
        } catch (RuntimeException e) {
            connector.close();
            throw e;
        }
    }

    @Override
    public void assign(Set<TopicPartition> partitions) {
        ensureOpen();
        if (subscribedTopic != null) {
            throw new IllegalStateException("already subscribed to '" + subscribedTopic + "'; assign and subscribe are exclusive");
        }
        applyAssignment(new TreeSet<>(partitions));
    }

    @Override
    public void subscribe(String topic) {
        ensureOpen();
        if (config.groupId() == null) {
            throw SluiceException.InvalidConfigException.of("groupId", null, "must be set to subscribe");
        }
        if (subscribedTopic != null && !subscribedTopic.equals(topic)) {
            throw new IllegalStateException("already subscribed to '" + subscribedTopic + "'");
        }
        subscribedTopic = topic;
        join();
    }

    @Override
    public Set<TopicPartition> assignment() {
        return Collections.unmodifiableSet(new TreeSet<>(assignment));
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        requireAssigned(partition);
        positions.put(partition, offset);
        forgetBuffered(partition);
        // A prefetch sent after the last poll reads from the old position: abandon it (its response is matched by
        // correlation id and dropped; positions only move on records handed out, so nothing is lost), and stop
        // prefetching while the consumer keeps seeking (see prefetchWasted).
        if (inFlightFetch != null) {
            prefetchWasted = true;
            inFlightFetch = null;
        }
        seekedSinceRecords = true;
    }

    @Override
    public void seekToBeginning(Set<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            seek(tp, listOffsets(tp).startOffset());
        }
    }

    @Override
    public void seekToEnd(Set<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            seek(tp, listOffsets(tp).endOffset());
        }
    }

    /**
     * One LIST_OFFSETS (version 1) round trip: the broker answers with {@code Broker.offsetForTimestamp}, the first
     * offset whose timestamp is at or after {@code epochMillis} (the end offset if none), as the embedded consumer
     * seeks. Like {@link #seek}, it drops the partition's prefetched records.
     */
    @Override
    public void seekToTimestamp(TopicPartition partition, long epochMillis) {
        requireAssigned(partition);
        ListOffsets.Request request = new ListOffsets.Request(partition.topic(),
                List.of(new ListOffsets.PartitionQuery(partition.partition(), epochMillis)));
        ListOffsets.PartitionOffsets found = call(ApiKey.LIST_OFFSETS, request::encode, ListOffsets.Response::decode)
                .partitions().get(0);
        seek(partition, found.timestampOffset());
    }

    @Override
    public long position(TopicPartition partition) {
        requireAssigned(partition);
        return positions.get(partition);
    }

    @Override
    public List<ConsumerRecord> poll(Duration timeout) {
        ensureOpen();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            maybeHeartbeat();
            List<ConsumerRecord> records = drainBuffer();
            if (!records.isEmpty()) {
                if (inFlightFetch == null && shouldPrefetch()) {
                    inFlightFetch = sendFetch(0);
                }
                seekedSinceRecords = false;
                return records;
            }
            long leftNanos = deadline - System.nanoTime();
            if (assignment.isEmpty()) {
                if (leftNanos <= 0) {
                    return List.of();
                }
                // nothing assigned yet (group rebalancing): wait for the next heartbeat, not longer than the timeout
                LockSupport.parkNanos(Math.min(leftNanos, pending ? PENDING_REJOIN_NANOS : heartbeatIntervalNanos()));
                continue;
            }
            if (inFlightFetch == null) {
                long waitNanos = Math.min(leftNanos, TimeUnit.MILLISECONDS.toNanos(MAX_FETCH_WAIT_MILLIS));
                if (memberId != null) {
                    // back in time for the next heartbeat (maybeHeartbeat just ran: a whole interval is left)
                    waitNanos = Math.min(waitNanos, lastHeartbeatNanos + heartbeatIntervalNanos() - System.nanoTime());
                }
                inFlightFetch = sendFetch((int) Math.max(0, TimeUnit.NANOSECONDS.toMillis(waitNanos)));
            }
            absorb(awaitFetch());
            if (buffer.isEmpty() && deadline - System.nanoTime() <= 0) {
                return List.of();
            }
        }
    }

    @Override
    public void commitSync() {
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        for (TopicPartition tp : assignment) {
            offsets.put(tp, positions.get(tp));
        }
        commitSync(offsets);
    }

    @Override
    public void commitSync(Map<TopicPartition, Long> offsets) {
        ensureOpen();
        if (config.groupId() == null) {
            throw SluiceException.InvalidConfigException.of("groupId", null, "must be set to commit");
        }
        if (offsets.isEmpty()) {
            return;
        }
        call(ApiKey.OFFSET_COMMIT, new OffsetCommit.Request(config.groupId(), memberId,
                memberId == null ? ConsumerGroups.NO_GENERATION : generation, offsets)::encode, in -> Boolean.TRUE);
    }

    @Override
    public long skippedByRetention() {
        return skippedByRetention;
    }

    @Override
    public java.util.Optional<ConsumerGroups.Membership> groupMembership() {
        return memberId == null || pending ? java.util.Optional.empty()
                : java.util.Optional.of(new ConsumerGroups.Membership(config.groupId(), memberId, generation, assignment()));
    }

    @Override
    public OptionalLong committed(TopicPartition partition) {
        if (config.groupId() == null) {
            return OptionalLong.empty();
        }
        long offset = committedOffsets(List.of(partition), null, ConsumerGroups.NO_GENERATION).getOrDefault(partition, OffsetFetch.NO_OFFSET);
        return offset == OffsetFetch.NO_OFFSET ? OptionalLong.empty() : OptionalLong.of(offset);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (memberId != null) {
                ClientConnection c = connector.current();
                if (c != null && c.isActive()) {
                    c.call(ApiKey.LEAVE_GROUP, new Groups.MemberRequest(config.groupId(), memberId)::encode, in -> Boolean.TRUE,
                            requestTimeoutMillis);
                }
            }
        } catch (SluiceException e) {
            LOG.info("leaving group '{}' failed ({}); the broker expires the member after its session timeout", config.groupId(), e.getMessage());
        } finally {
            connector.close();
        }
    }

    // ------------------------------------------------------------------ fetching

    private CompletableFuture<Fetch.Response> sendFetch(int maxWaitMillis) {
        List<Fetch.PartitionRequest> partitions = new ArrayList<>(assignment.size());
        for (TopicPartition tp : assignment) {
            partitions.add(new Fetch.PartitionRequest(tp, fetchPosition(tp), config.maxPollBytes()));
        }
        Fetch.Request request = new Fetch.Request(maxWaitMillis, config.maxPollBytes(), partitions);
        inFlightWaitMillis = maxWaitMillis;
        return connector.connected().request(ApiKey.FETCH, request::encode, in -> Fetch.Response.decodeBatches(in, request));
    }

    /**
     * Whether a poll that returns records sends the next fetch before the application asks for it: always, unless a
     * seek abandoned the last prefetch and this poll is the first to return records since a seek.
     */
    private boolean shouldPrefetch() {
        if (!seekedSinceRecords) {
            prefetchWasted = false; // reading on from where the last poll ended
        }
        return !prefetchWasted;
    }

    /** Where the next fetch of {@code tp} starts: after its buffered records, else at its position. */
    private long fetchPosition(TopicPartition tp) {
        Long buffered = fetchPositions.get(tp);
        return buffered != null ? buffered : positions.get(tp);
    }

    /** Drops {@code tp}'s buffered records (its position moved elsewhere). */
    private void forgetBuffered(TopicPartition tp) {
        if (fetchPositions.remove(tp) != null) {
            buffer.removeIf(run -> run.partition.equals(tp));
        }
    }

    private Fetch.Response awaitFetch() {
        CompletableFuture<Fetch.Response> f = inFlightFetch;
        inFlightFetch = null;
        return await(f, inFlightWaitMillis + requestTimeoutMillis, ApiKey.FETCH);
    }

    private void absorb(Fetch.Response response) {
        for (Fetch.PartitionData p : response.partitions()) {
            TopicPartition tp = p.partition();
            Long position = positions.get(tp);
            if (position == null) {
                continue;
            }
            if (p.error() == SluiceException.Code.OFFSET_OUT_OF_RANGE) {
                if (config.offsetReset() == OffsetReset.NONE) {
                    throw new SluiceException.OffsetOutOfRangeException(p.errorMessage());
                }
                long reset = config.offsetReset() == OffsetReset.EARLIEST ? p.startOffset() : p.endOffset();
                long skipped = Math.max(0, Math.min(reset, p.startOffset()) - position);
                skippedByRetention += skipped;
                LOG.warn("{}: {}; offsetReset={} moves to {}: {} offsets were never read", tp, p.errorMessage(),
                        config.offsetReset(), reset, skipped);
                positions.put(tp, reset);
                forgetBuffered(tp);
                continue;
            }
            if (p.error() == SluiceException.Code.CORRUPT_RECORD) {
                String message = String.valueOf(p.errorMessage());
                throw new SluiceException.CorruptRecordException(message.startsWith(tp.toString()) ? message : tp + ": " + message,
                        tp, fetchPosition(tp));
            }
            if (p.error() != SluiceException.Code.NONE) {
                throw SluiceException.fromCode(p.error(), tp + ": " + p.errorMessage());
            }
            List<ConsumerRecord> records = p.records();
            if (!records.isEmpty() && records.get(0).offset() == fetchPosition(tp)) {
                long last = records.get(records.size() - 1).offset();
                if (last - records.get(0).offset() != records.size() - 1) {
                    throw new SluiceException.CorruptRecordException(tp + ": fetched offsets " + records.get(0).offset()
                            + ".." + last + " are not " + records.size() + " consecutive offsets", tp, records.get(0).offset());
                }
                buffer.add(new Run(tp, records));
                fetchPositions.put(tp, last + 1);
            }
        }
    }

    /** Up to maxPollRecords buffered records that still follow their partition's position. */
    private List<ConsumerRecord> drainBuffer() {
        if (buffer.isEmpty()) {
            return List.of();
        }
        int max = config.maxPollRecords();
        List<ConsumerRecord> out = new ArrayList<>(Math.min(buffer.peek().remaining(), max));
        Run run;
        while (out.size() < max && (run = buffer.peek()) != null) {
            // a run holds consecutive offsets: it follows the partition's position as a whole or not at all
            Long position = positions.get(run.partition);
            if (position != null && position > run.nextOffset() && position - run.nextOffset() < run.remaining()) {
                run.next += (int) (position - run.nextOffset()); // the position is inside the run: skip to it
            }
            if (position == null || run.nextOffset() != position) {
                buffer.poll(); // unassigned, or the position moved (seek): these records are not next
                continue;
            }
            int n = Math.min(run.remaining(), max - out.size());
            out.addAll(run.records.subList(run.next, run.next + n));
            run.next += n;
            positions.put(run.partition, position + n);
            if (run.remaining() == 0) {
                buffer.poll();
            }
        }
        if (buffer.isEmpty()) {
            fetchPositions.clear(); // every partition fetches from its position again
        }
        return out;
    }

    // ------------------------------------------------------------------ groups and offsets

    private void join() {
        ConsumerGroups.Membership m = call(ApiKey.JOIN_GROUP,
                new Groups.JoinRequest(config.groupId(), subscribedTopic, memberId, generation, config.clientId(),
                        (int) Math.min(Integer.MAX_VALUE, config.sessionTimeoutMillis()))::encode,
                in -> Groups.readMembership(in, config.groupId()));
        onMembership(m);
    }

    /** Heartbeat, or rejoin while a rebalance is pending; a refused heartbeat drops every partition first. */
    private void maybeHeartbeat() {
        long interval = pending ? PENDING_REJOIN_NANOS : heartbeatIntervalNanos();
        if (memberId == null || System.nanoTime() - lastHeartbeatNanos < interval) {
            return;
        }
        try {
            if (pending) {
                join();
                return;
            }
            ConsumerGroups.Membership m = call(ApiKey.HEARTBEAT,
                    new Groups.HeartbeatRequest(config.groupId(), memberId, generation)::encode,
                    in -> Groups.readMembership(in, config.groupId()));
            onMembership(m);
        } catch (SluiceException.RebalanceInProgressException | SluiceException.IllegalGenerationException e) {
            LOG.debug("group '{}': {}; revoking {} and rejoining", config.groupId(), e.getMessage(), assignment);
            applyAssignment(new TreeSet<>());
            try {
                join();
            } catch (SluiceException.UnknownMemberException | SluiceException.FencedMemberException expired) {
                joinAsNewMember(expired);
            }
        } catch (SluiceException.UnknownMemberException | SluiceException.FencedMemberException e) {
            joinAsNewMember(e);
        }
    }

    private void joinAsNewMember(SluiceException why) {
        LOG.info("member {} of group '{}': {}; joining as a new member", memberId, config.groupId(), why.getMessage());
        applyAssignment(new TreeSet<>());
        memberId = null;
        generation = ConsumerGroups.NO_GENERATION;
        pending = false;
        join();
    }

    private void onMembership(ConsumerGroups.Membership m) {
        lastHeartbeatNanos = System.nanoTime();
        memberId = m.memberId();
        pending = m.pending();
        if (pending) {
            if (!assignment.isEmpty()) {
                applyAssignment(new TreeSet<>());
            }
        } else if (m.generation() != generation || !m.assignment().equals(assignment)) {
            generation = m.generation();
            try {
                applyAssignment(new TreeSet<>(m.assignment()));
            } catch (SluiceException.UnknownMemberException | SluiceException.FencedMemberException
                     | SluiceException.IllegalGenerationException refused) {
                // The session ran out (or the generation moved on) between the join and the committed-offset lookups
                // of the new partitions (OFFSET_FETCH carries the member and generation): this thread or its requests
                // were held longer than session.timeout.ms, as on a loaded machine. Take nothing and join again at
                // the next poll, as after a heartbeat refused for expiry, instead of failing subscribe() or poll().
                LOG.info("group '{}': {} while taking {}; joining again at the next poll", config.groupId(),
                        refused.getMessage(), m.assignment());
                applyAssignment(new TreeSet<>());
                pending = true;
            }
        }
    }

    /** A third of the session timeout, at most a second, so members learn of a rebalance quickly. */
    private long heartbeatIntervalNanos() {
        return TimeUnit.MILLISECONDS.toNanos(Math.max(1, Math.min(MAX_HEARTBEAT_INTERVAL_MILLIS, config.sessionTimeoutMillis() / 3)));
    }

    private void applyAssignment(Set<TopicPartition> next) {
        if (inFlightFetch != null) {
            // its positions may belong to the old assignment: finish it and drop what it brought
            try {
                awaitFetch();
            } catch (SluiceException e) {
                LOG.debug("discarding prefetch after reassignment: {}", e.getMessage());
            }
        }
        buffer.clear();
        fetchPositions.clear();
        positions.keySet().retainAll(next);
        assignment.clear();
        assignment.addAll(next);
        List<TopicPartition> fresh = new ArrayList<>();
        for (TopicPartition tp : next) {
            if (!positions.containsKey(tp)) {
                fresh.add(tp);
            }
        }
        if (fresh.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> committed = config.groupId() == null ? Map.of()
                : committedOffsets(fresh, memberId, memberId == null ? ConsumerGroups.NO_GENERATION : generation);
        for (TopicPartition tp : fresh) {
            long offset = committed.getOrDefault(tp, OffsetFetch.NO_OFFSET);
            if (offset == OffsetFetch.NO_OFFSET) {
                ListOffsets.PartitionOffsets range = listOffsets(tp);
                offset = switch (config.offsetReset()) {
                    case EARLIEST -> range.startOffset();
                    case LATEST -> range.endOffset();
                    case NONE -> throw new SluiceException.OffsetOutOfRangeException(
                            "no committed offset for " + tp + " and offsetReset is NONE");
                };
            }
            positions.put(tp, offset);
        }
    }

    private Map<TopicPartition, Long> committedOffsets(List<TopicPartition> partitions, String member, int memberGeneration) {
        return call(ApiKey.OFFSET_FETCH, new OffsetFetch.Request(config.groupId(), member, memberGeneration, partitions)::encode,
                OffsetFetch.Response::decode).offsets();
    }

    private ListOffsets.PartitionOffsets listOffsets(TopicPartition tp) {
        return call(ApiKey.LIST_OFFSETS, ListOffsets.Request.ranges(tp.topic(), List.of(tp.partition()))::encode,
                ListOffsets.Response::decode).partitions().get(0);
    }

    // ------------------------------------------------------------------ plumbing

    private <T> T call(ApiKey api, java.util.function.Consumer<ByteBuf> body, Function<ByteBuf, T> decoder) {
        return connector.connected().call(api, body, decoder, requestTimeoutMillis);
    }

    private <T> T await(CompletableFuture<T> future, long timeoutMillis, ApiKey api) {
        try {
            return future.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SluiceException(SluiceException.Code.TIMEOUT, api + " interrupted");
        } catch (TimeoutException e) {
            throw new SluiceException(SluiceException.Code.TIMEOUT, api + " got no answer within " + timeoutMillis + " ms");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SluiceException se) {
                throw se;
            }
            throw new SluiceException(SluiceException.Code.UNKNOWN, api + " failed: " + e.getCause(), e.getCause());
        }
    }

    private void requireAssigned(TopicPartition tp) {
        if (!assignment.contains(tp)) {
            throw new IllegalStateException(tp + " is not assigned to this consumer (assignment: " + assignment + ")");
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new SluiceException.ClosedException("consumer is closed");
        }
    }

    /** Records of one partition with consecutive offsets, from one fetch; {@code next} is the first not yet polled. */
    private static final class Run {
        final TopicPartition partition;
        final List<ConsumerRecord> records;
        int next;

        Run(TopicPartition partition, List<ConsumerRecord> records) {
            this.partition = partition;
            this.records = records;
        }

        long nextOffset() {
            return records.get(next).offset();
        }

        int remaining() {
            return records.size() - next;
        }
    }
}
