package io.sluice.redis;

import io.lettuce.core.Consumer;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.XClaimArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.XTrimArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.models.stream.ClaimedMessages;
import io.lettuce.core.models.stream.PendingMessage;
import io.sluice.redis.internal.PackedEntries;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * One member of a stream's consumer group, on its own connection of a {@link RedisEndpoint} (one server or a
 * cluster: every command names the one stream key). Hands out {@link StreamEntry}s with their events unpacked (see
 * {@link StreamWriter}), and leaves every decision (how many, when to claim, what to dead-letter, when to
 * acknowledge) to its user. <b>Single-threaded</b>: one thread uses a reader.
 *
 * <ul>
 *   <li>{@link #read}: {@code XREADGROUP ... >} new entries, waiting up to a linger to fill the batch;</li>
 *   <li>{@link #readOwnPending}: {@code XREADGROUP ... 0}, the entries already delivered to this member (after a lost
 *       reply, or a restart under the same member name);</li>
 *   <li>{@link #claimIdle}: {@code XAUTOCLAIM} entries idle past a bound at any member (a dead or stalled one), with
 *       their delivery counts ({@code XPENDING}); with a {@link DeadLetterStream} and a maximum of deliveries, an
 *       entry delivered more often is given up there and acknowledged instead of handed out (a poison entry that
 *       keeps killing or stalling its members must not stop the flow). The one claim path of redis-transport:
 *       {@link RedisStreamsConsumer} and ingest's drainers both claim through it;</li>
 *   <li>{@link #keep}: {@code XCLAIM JUSTID} of this member's entries, resetting their idle time, so that a live
 *       member waiting on a slow downstream (a long INSERT) is not taken over;</li>
 *   <li>{@link #acknowledge}: {@code XACK}, then (a reader that trims, ingest's: its stream is a buffer) the entries
 *       leave the stream: {@code XTRIM MINID} to the groups'
 *       {@link StreamGroups#floor} on Redis 6.2+ (every group's, so another group on the stream is never cut short;
 *       at most every 100 ms, as XTRIM removes whole stream nodes cheaply where XDEL of 10,000 ids costs Redis
 *       hundreds of ms and stalls every XADD meanwhile, measured), {@code XDEL} of the ids on older servers.</li>
 * </ul>
 *
 * Failures are {@link RedisStreamException}s; {@link GroupLostException} when the group is gone (Redis restarted without
 * its data): the reader has recreated it by then, at {@code 0}. An entry whose packed field does not parse is not a
 * failure of the read: it comes back among the others with {@link StreamEntry#malformed()} set (no events), for the
 * user to dead-letter and acknowledge, as every later read would find it malformed again.
 */
public final class GroupReader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GroupReader.class);
    private static final long TRIM_INTERVAL_NANOS = 100_000_000L;
    /** How long one XREADGROUP for new entries blocks when the stream is empty. */
    private static final long BLOCK_MS = 500;

    /** The stream's group was gone; it was recreated (at {@code 0}, so nothing still in the stream is missed). */
    public static final class GroupLostException extends RedisStreamException {
        GroupLostException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * What one {@link #claimIdle} step took over, and where the next step continues ({@code "0-0"}: done).
     *
     * @param deadLetteredEntries entries given up (dead-lettered and acknowledged) instead of handed out
     * @param deadLetters         the letters they made (one per event)
     */
    public record Claimed(String cursor, List<StreamEntry> entries, int deadLetteredEntries, int deadLetters) {
        public Claimed(String cursor, List<StreamEntry> entries) {
            this(cursor, entries, 0, 0);
        }
    }

    private final RedisEndpoint endpoint;
    /** A connection of its owner's to use instead of one of its own (never closed here), or null. */
    private final RedisEndpoint.Link shared;
    private final boolean trims;
    private final byte[] key;
    private final String stream;
    private final String groupName;
    private final byte[] group;
    private final Consumer<byte[]> member;
    private final String memberName;
    private RedisEndpoint.Link connection;
    private RedisClusterCommands<byte[], byte[]> redis;
    private boolean minIdTrim;
    private long lastTrimNanos;

    /**
     * @param member this member's name in the group; after a crash, a new name's {@link #claimIdle} takes the old
     *               name's entries over, the same name's {@link #readOwnPending} gets them at once
     */
    public GroupReader(RedisEndpoint endpoint, String stream, String group, String member) {
        this(endpoint, null, true, stream, group, member);
    }

    /**
     * A reader on its owner's connection that does not trim ({@link RedisStreamsConsumer}'s: a topic's stream is
     * trimmed by its producer's policy, and acknowledging an entry must not remove it for other groups or replays).
     */
    GroupReader(RedisEndpoint.Link shared, String stream, String group, String member) {
        this(null, shared, false, stream, group, member);
    }

    private GroupReader(RedisEndpoint endpoint, RedisEndpoint.Link shared, boolean trims, String stream, String group, String member) {
        this.endpoint = endpoint;
        this.shared = shared;
        this.trims = trims;
        this.stream = stream;
        this.groupName = group;
        this.key = stream.getBytes(StandardCharsets.UTF_8);
        this.group = group.getBytes(StandardCharsets.UTF_8);
        this.memberName = member;
        this.member = Consumer.from(this.group, member.getBytes(StandardCharsets.UTF_8));
    }

    public String stream() {
        return stream;
    }

    public String member() {
        return memberName;
    }

    /**
     * Connects unless connected, creates the group at {@code 0} with {@code MKSTREAM} unless it exists, and learns
     * whether the server trims by {@code MINID}. Call before the other commands, and again after a failure (cheap
     * when connected).
     */
    public void open() {
        if (connection != null) {
            return;
        }
        call(() -> {
            RedisEndpoint.Link link = shared != null ? shared : endpoint.connect();
            try {
                redis = link.sync();
                createGroup();
                minIdTrim = trims && supportsMinIdTrim(redis.info("server"));
            } catch (RuntimeException e) {
                if (shared == null) {
                    link.close();
                }
                redis = null;
                throw e;
            }
            connection = link;
            return null;
        });
    }

    /**
     * New entries: {@code XREADGROUP COUNT maxEntries BLOCK 500 ... >}, then, while entries keep coming, more reads
     * until {@code maxEntries} or {@code lingerMs} after the call (or {@code running} turns false). Empty when none
     * came within the block time.
     */
    public List<StreamEntry> read(int maxEntries, long lingerMs, BooleanSupplier running) {
        return read(maxEntries, BLOCK_MS, lingerMs, running);
    }

    /**
     * As {@link #read(int, long, BooleanSupplier)}, the first XREADGROUP blocking up to {@code blockMs} (at least 1)
     * when the stream has nothing new.
     */
    @SuppressWarnings("unchecked") // Lettuce's xreadgroup takes generic varargs of StreamOffset
    public List<StreamEntry> read(int maxEntries, long blockMs, long lingerMs, BooleanSupplier running) {
        return call(() -> {
            long lingerEnd = System.nanoTime() + lingerMs * 1_000_000L;
            List<StreamEntry> out = new ArrayList<>();
            List<StreamMessage<byte[], byte[]>> got = redis.xreadgroup(member, XReadArgs.Builder.count(maxEntries).block(Math.max(1, blockMs)),
                    XReadArgs.StreamOffset.lastConsumed(key));
            addAll(out, got, Map.of());
            while (!got.isEmpty() && out.size() < maxEntries && running.getAsBoolean()) {
                long waitMs = (lingerEnd - System.nanoTime()) / 1_000_000L;
                if (waitMs <= 0) {
                    break;
                }
                got = redis.xreadgroup(member, XReadArgs.Builder.count(maxEntries - out.size()).block(waitMs),
                        XReadArgs.StreamOffset.lastConsumed(key));
                addAll(out, got, Map.of());
            }
            return out;
        });
    }

    /** Up to {@code maxEntries} of the entries delivered to this member and not acknowledged, oldest first. */
    public List<StreamEntry> readOwnPending(int maxEntries) {
        return readOwnPending("0", maxEntries);
    }

    /**
     * Up to {@code maxEntries} of the entries delivered to this member and not acknowledged with an id above
     * {@code after} ({@code "0"}: from the oldest), oldest first: pages through them while earlier pages are still
     * pending.
     */
    @SuppressWarnings("unchecked") // Lettuce's xreadgroup takes generic varargs of StreamOffset
    public List<StreamEntry> readOwnPending(String after, int maxEntries) {
        return call(() -> {
            List<StreamEntry> out = new ArrayList<>();
            addAll(out, redis.xreadgroup(member, XReadArgs.Builder.count(maxEntries), XReadArgs.StreamOffset.from(key, after)), Map.of());
            return out;
        });
    }

    /**
     * One step of taking over entries idle for at least {@code minIdleMs} at any member ({@code XAUTOCLAIM} from
     * {@code cursor}, {@code "0-0"} to start), each with its delivery count after this claim. Entries deleted from the
     * stream meanwhile are left out. They are this member's now: acknowledge them, or they are claimed again.
     */
    public Claimed claimIdle(String cursor, long minIdleMs, int count) {
        return call(() -> {
            ClaimedMessages<byte[], byte[]> claimed = redis.xautoclaim(key, new XAutoClaimArgs<byte[]>()
                    .consumer(member).minIdleTime(minIdleMs).startId(cursor).count(count));
            List<StreamMessage<byte[], byte[]>> msgs = new ArrayList<>();
            for (StreamMessage<byte[], byte[]> m : claimed.getMessages()) {
                if (m != null && m.getBody() != null && !m.getBody().isEmpty()) {
                    msgs.add(m);
                }
            }
            List<StreamEntry> out = new ArrayList<>(msgs.size());
            if (!msgs.isEmpty()) {
                addAll(out, msgs, deliveries(msgs));
            }
            String next = claimed.getId();
            return new Claimed(next == null ? "0-0" : next, out);
        });
    }

    /**
     * As {@link #claimIdle(String, long, int)}, and an entry the group has delivered more than {@code maxDeliveries}
     * times before this claim is given up instead of handed out: its {@link DeadLetterStream#lettersOf letters} are
     * appended to {@code deadLetters} (with this group and the count), then it is acknowledged. A crash or failure
     * in between leaves a copy in both, claimed and given up again (at-least-once). {@code maxDeliveries <= 0}:
     * nothing is given up.
     */
    public Claimed claimIdle(String cursor, long minIdleMs, int count, int maxDeliveries, DeadLetterStream deadLetters) {
        Claimed claimed = claimIdle(cursor, minIdleMs, count);
        if (maxDeliveries <= 0 || claimed.entries().isEmpty()) {
            return claimed;
        }
        List<StreamEntry> handedOut = new ArrayList<>(claimed.entries().size());
        List<DeadLetterStream.Letter> letters = new ArrayList<>();
        List<String> givenUp = new ArrayList<>();
        for (StreamEntry e : claimed.entries()) {
            long delivered = e.deliveries() - 1; // the count includes this claim, which handed it to no one yet
            if (delivered >= maxDeliveries) {
                letters.addAll(DeadLetterStream.lettersOf(stream, e, "delivered " + delivered + " times without being"
                        + " acknowledged (max deliveries " + maxDeliveries + "): its members crashed or stalled on it", groupName, delivered));
                givenUp.add(e.id());
            } else {
                handedOut.add(e);
            }
        }
        if (givenUp.isEmpty()) {
            return claimed;
        }
        deadLetters.append(letters);
        acknowledge(givenUp.toArray(String[]::new));
        LOG.warn("stream {}: {} entr(ies) delivered {}+ times given up to {} ({} letters), first {}", stream, givenUp.size(),
                maxDeliveries, deadLetters.key(), letters.size(), givenUp.get(0));
        return new Claimed(claimed.cursor(), handedOut, givenUp.size(), letters.size());
    }

    /**
     * The delivery counts of entries just claimed (this member's now), from {@code XPENDING} of this member over their
     * id range, page by page: other entries of this member in that range do not crowd any of them out.
     */
    private Map<String, Long> deliveries(List<StreamMessage<byte[], byte[]>> msgs) {
        Map<String, Long> deliveries = new HashMap<>();
        java.util.Set<String> wanted = new java.util.HashSet<>();
        for (StreamMessage<byte[], byte[]> m : msgs) {
            wanted.add(m.getId());
        }
        String last = msgs.get(msgs.size() - 1).getId();
        Range.Boundary<String> from = Range.Boundary.including(msgs.get(0).getId());
        int page = Math.max(100, msgs.size());
        while (deliveries.size() < wanted.size()) {
            List<PendingMessage> pending = redis.xpending(key, member, Range.from(from, Range.Boundary.including(last)), Limit.from(page));
            for (PendingMessage p : pending) {
                if (wanted.contains(p.getId())) {
                    deliveries.put(p.getId(), p.getRedeliveryCount());
                }
            }
            if (pending.size() < page) {
                break;
            }
            from = Range.Boundary.excluding(pending.get(pending.size() - 1).getId());
        }
        return deliveries;
    }

    /** Resets the idle time of these entries of this member ({@code XCLAIM JUSTID}), so that no one takes them over yet. */
    public void keep(Collection<String> ids) {
        call(() -> redis.xclaim(key, member, XClaimArgs.Builder.justid(), ids.toArray(String[]::new)));
    }

    /**
     * {@code XACK} of these entries, then, for a reader that trims, they leave the stream ({@code XTRIM MINID} to the
     * groups' floor, or {@code XDEL} on a server before 6.2). Throws when Redis did not take the XACK: the entries
     * stay pending.
     */
    public void acknowledge(String... ids) {
        call(() -> {
            redis.xack(key, group, ids);
            if (minIdTrim) {
                trim();
            } else if (trims) {
                redis.xdel(key, ids);
            }
            return null;
        });
    }

    /**
     * Removes what every group acknowledged (Redis 6.2+; elsewhere acknowledged entries are deleted by
     * {@link #acknowledge}), at most every 100 ms: for when nothing new arrives, so the tail the last
     * acknowledgements left, and what other groups acknowledged since, leaves the stream.
     */
    public void trimAcknowledged() {
        if (minIdTrim) {
            call(() -> {
                trim();
                return null;
            });
        }
    }

    /** {@link #trimAcknowledged()} at once, however recent the last trim: before closing, after the last XACKs. */
    public void trimAcknowledgedNow() {
        if (minIdTrim && redis != null) {
            call(() -> {
                trimToFloor();
                return null;
            });
        }
    }

    private void trim() {
        long now = System.nanoTime();
        if (now - lastTrimNanos < TRIM_INTERVAL_NANOS) {
            return;
        }
        trimToFloor();
    }

    private void trimToFloor() {
        lastTrimNanos = System.nanoTime();
        long floor = StreamGroups.floor(redis, key);
        if (floor == Long.MAX_VALUE || floor <= 0) {
            return; // no group, or nothing delivered yet
        }
        redis.xtrim(key, XTrimArgs.Builder.minId(StreamGroups.entryId(floor)));
    }

    private void createGroup() {
        try {
            redis.xgroupCreate(XReadArgs.StreamOffset.from(key, "0"), group, new XGroupCreateArgs().mkstream(true));
        } catch (RedisBusyException e) {
            // BUSYGROUP: exists
        }
    }

    private static void addAll(List<StreamEntry> out, List<StreamMessage<byte[], byte[]>> msgs, Map<String, Long> deliveries) {
        for (StreamMessage<byte[], byte[]> m : msgs) {
            long delivered = deliveries.getOrDefault(m.getId(), 0L);
            StreamEntry entry;
            try {
                entry = new StreamEntry(m.getId(), PackedEntries.events(m.getId(), m.getBody()), delivered, null, m.getBody());
            } catch (MalformedEntryException e) {
                // handed out, not thrown: one bad entry must not fail the read of the good ones around it
                entry = new StreamEntry(m.getId(), List.of(), delivered, e, m.getBody());
            }
            out.add(entry);
        }
    }

    /** Runs Redis commands; their failures as {@link RedisStreamException}, a lost group recreated first. */
    private <T> T call(Supplier<T> commands) {
        try {
            return commands.get();
        } catch (RedisCommandExecutionException e) {
            if (String.valueOf(e.getMessage()).startsWith("NOGROUP")) {
                LOG.warn("stream {} lost its group (Redis restarted without data?); recreating it", stream);
                try {
                    if (redis != null) {
                        createGroup();
                    }
                } catch (RedisException again) {
                    LOG.warn("cannot create group yet: {}", again.toString());
                }
                throw new GroupLostException("stream " + stream + " lost its group " + new String(group, StandardCharsets.UTF_8), e);
            }
            throw failure(e);
        } catch (RedisException e) {
            throw failure(e);
        }
    }

    private RedisStreamException failure(RedisException e) {
        return new RedisStreamException("Redis: " + e, e);
    }

    /** XTRIM MINID exists from Redis 6.2 on; older servers get XDEL after XACK. */
    static boolean supportsMinIdTrim(String serverInfo) {
        for (String line : serverInfo.split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                String[] v = line.substring("redis_version:".length()).trim().split("\\.");
                int major = Integer.parseInt(v[0]);
                int minor = v.length > 1 ? Integer.parseInt(v[1]) : 0;
                return major > 6 || major == 6 && minor >= 2;
            }
        }
        return false;
    }

    /** Closes the connection (unless it is its owner's); {@link #open} opens a new one. */
    @Override
    public void close() {
        if (connection != null) {
            if (shared == null) {
                connection.close();
            }
            connection = null;
            redis = null;
        }
    }
}
