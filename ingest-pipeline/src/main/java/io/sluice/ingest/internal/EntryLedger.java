package io.sluice.ingest.internal;

import io.sluice.core.ConsumerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.redis.StreamEntry;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The entries a Redis group member holds, as {@link IngestEngine} sees them: the decisions of
 * {@link StreamGroupConsumer} apart from Redis (so they have server-less tests, {@code EntryLedgerTest}). Shared by
 * the member's consumer and its {@link EntryBatches} sink, which looks a record's entry up here.
 *
 * <ul>
 *   <li><b>Positions.</b> Entry ids are not dense (and a packed entry holds several events), while the engine cuts
 *       batches at gaps in the offsets: each entry taken gets the next of a dense run of positions, local to this
 *       ledger ({@link ConsumerRecord#offset()}), so consecutive entries fill one batch. A batch's identity is still
 *       the source's: the ids of its first and last entry.</li>
 *   <li><b>Hold and retry instead of seek.</b> Moving a shared group's position ({@code XGROUP SETID}) would move
 *       every member, and taken-over entries sit below it by design: {@link #seek} only makes the records from a
 *       position on be handed out again, from here. While some are held, nothing new is read.</li>
 *   <li><b>Acknowledge, not commit.</b> The engine commits a prefix of positions once every batch in it landed;
 *       {@link #acknowledge} turns that prefix into the entry ids to {@code XACK}, in order.</li>
 *   <li><b>One copy per entry.</b> An entry already held (a claim or a re-read of the member's pending list finding
 *       an entry in flight here) is not taken twice.</li>
 * </ul>
 *
 * <p><b>Single-threaded</b>: the engine's poller thread (which runs the consumer and the sink's {@link EntryBatches#add}).
 */
final class EntryLedger {

    /** An entry taken at a position; {@code redelivered}: delivered before (taken over, or re-read after an error). */
    record Held(long position, StreamEntry entry, boolean redelivered) {
    }

    /** What a commit acknowledges: the entries' ids, in order, and the events they hold. */
    record Acknowledgement(String[] ids, int events) {
        static final Acknowledgement NONE = new Acknowledgement(new String[0], 0);
    }

    private static final byte[] NO_VALUE = new byte[0];

    private final TopicPartition partition;
    /** Entries taken and not acknowledged, at positions base, base + 1, ... */
    private final List<Held> window = new ArrayList<>();
    private final Set<String> ids = new HashSet<>();
    private long base;
    /** The next position {@link #handOut} hands out: below it, handed out; from it on, held. */
    private long next;

    EntryLedger(String stream) {
        this.partition = new TopicPartition(stream, 0);
    }

    TopicPartition partition() {
        return partition;
    }

    /** Forgets everything (a new consumer: the engine starts again, and the member's pending list is re-read). */
    void clear() {
        window.clear();
        ids.clear();
        base = 0;
        next = 0;
    }

    /** Takes entries read from Redis at the next positions, leaving out those already held; returns how many were taken. */
    int take(List<StreamEntry> entries, boolean redelivered) {
        int n = 0;
        for (StreamEntry e : entries) {
            if (ids.add(e.id())) {
                window.add(new Held(base + window.size(), e, redelivered));
                n++;
            }
        }
        return n;
    }

    /** True when records read are waiting to be handed out (again): read nothing new until they are. */
    boolean holding() {
        return next < base + window.size();
    }

    /** Up to {@code max} records from the first one not handed out, as the engine's records. */
    List<ConsumerRecord> handOut(int max) {
        long end = Math.min(base + window.size(), next + Math.max(1, max));
        List<ConsumerRecord> out = new ArrayList<>((int) (end - next));
        for (long p = next; p < end; p++) {
            Held h = window.get((int) (p - base));
            out.add(new ConsumerRecord(partition.topic(), partition.partition(), p, timestamp(h.entry().id()), null, NO_VALUE, List.of()));
        }
        next = end;
        return out;
    }

    /** Hold and retry: the records from {@code position} on are handed out again (within what is held). */
    void seek(long position) {
        next = Math.max(base, Math.min(position, base + window.size()));
    }

    /** The entry at a position handed out and not acknowledged. */
    Held get(long position) {
        if (position < base || position >= base + window.size()) {
            throw new IllegalArgumentException("position " + position + " is not held (held: [" + base + ", "
                    + (base + window.size()) + "))");
        }
        return window.get((int) (position - base));
    }

    /** The first position not acknowledged. */
    long floor() {
        return base;
    }

    /** The next position handed out. */
    long position() {
        return next;
    }

    /**
     * The entries below {@code upTo} not acknowledged yet, removed from the ledger: the engine committed them (every
     * batch up to there landed). Never beyond what was handed out.
     */
    Acknowledgement acknowledge(long upTo) {
        int n = (int) (Math.min(upTo, next) - base);
        if (n <= 0) {
            return Acknowledgement.NONE;
        }
        List<Held> done = window.subList(0, n);
        String[] out = new String[n];
        int events = 0;
        for (int i = 0; i < n; i++) {
            StreamEntry e = done.get(i).entry();
            out[i] = e.id();
            events += e.events().size();
            ids.remove(e.id());
        }
        done.clear();
        base += n;
        return new Acknowledgement(out, events);
    }

    /** Every entry held (handed out or not): the ones to keep this member's while it works on them. */
    List<String> heldIds() {
        List<String> out = new ArrayList<>(window.size());
        for (Held h : window) {
            out.add(h.entry().id());
        }
        return out;
    }

    int size() {
        return window.size();
    }

    /** The milliseconds part of an entry id ({@code <ms>-<seq>}), or 0 for an id of another form. */
    static long timestamp(String id) {
        int dash = id.indexOf('-');
        try {
            return Long.parseLong(dash < 0 ? id : id.substring(0, dash));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
