package io.sluice.ingest.internal;

import io.sluice.core.ConsumerRecord;
import io.sluice.redis.StreamEntry;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Redis member's bookkeeping for the engine, without Redis: positions, hold and retry, acknowledgement. */
class EntryLedgerTest {

    @Test
    void entriesWithSparseIdsGetDensePositionsSoThatTheyFillOneBatch() {
        EntryLedger ledger = new EntryLedger("s");
        ledger.take(List.of(entry("1000-0", 3), entry("1000-7", 1), entry("2500-0", 2)), false);
        List<ConsumerRecord> records = ledger.handOut(10);
        assertThat(records).extracting(ConsumerRecord::offset).containsExactly(0L, 1L, 2L);
        assertThat(records).extracting(ConsumerRecord::topic).containsOnly("s");
        assertThat(records.get(2).timestamp()).isEqualTo(2500L);
        assertThat(ledger.get(1).entry().id()).isEqualTo("1000-7");
        assertThat(ledger.holding()).isFalse();
    }

    @Test
    void seekHoldsRecordsBackAndHandsThemOutAgainWithTheirPositions() {
        EntryLedger ledger = new EntryLedger("s");
        ledger.take(entries(0, 5), false);
        assertThat(ledger.handOut(10)).hasSize(5);
        ledger.seek(2);
        assertThat(ledger.holding()).as("nothing new is read while records are held").isTrue();
        List<ConsumerRecord> again = ledger.handOut(2);
        assertThat(again).extracting(ConsumerRecord::offset).containsExactly(2L, 3L);
        assertThat(ledger.handOut(10)).extracting(ConsumerRecord::offset).containsExactly(4L);
        ledger.seek(99);
        assertThat(ledger.position()).as("never beyond what is held").isEqualTo(5);
    }

    @Test
    void aCommitAcknowledgesThePrefixOfEntriesInOrderAndOnlyWhatWasHandedOut() {
        EntryLedger ledger = new EntryLedger("s");
        ledger.take(entries(0, 6), false);
        ledger.handOut(4);
        EntryLedger.Acknowledgement first = ledger.acknowledge(3);
        assertThat(first.ids()).containsExactly(id(0), id(1), id(2));
        assertThat(first.events()).isEqualTo(6);
        assertThat(ledger.acknowledge(3).ids()).as("acknowledged once").isEmpty();
        assertThat(ledger.acknowledge(6).ids()).as("up to what was handed out").containsExactly(id(3));
        assertThat(ledger.floor()).isEqualTo(4);
        assertThatThrownBy(() -> ledger.get(2)).isInstanceOf(IllegalArgumentException.class);
        assertThat(ledger.heldIds()).containsExactly(id(4), id(5));
        assertThat(ledger.handOut(10)).extracting(ConsumerRecord::offset).containsExactly(4L, 5L);
    }

    @Test
    void anEntryAlreadyHeldIsNotTakenTwiceAndARedeliveredOneIsMarked() {
        EntryLedger ledger = new EntryLedger("s");
        ledger.take(entries(0, 3), false);
        int taken = ledger.take(List.of(entry(id(1), 2), entry(id(7), 2)), true);
        assertThat(taken).isEqualTo(1);
        assertThat(ledger.size()).isEqualTo(4);
        assertThat(ledger.get(3).redelivered()).isTrue();
        assertThat(ledger.get(1).redelivered()).isFalse();
        ledger.handOut(10);
        ledger.acknowledge(4);
        assertThat(ledger.take(List.of(entry(id(1), 2)), true)).as("acknowledged entries may come back (taken over again)").isEqualTo(1);
    }

    @Test
    void clearingStartsAgainFromPositionZero() {
        EntryLedger ledger = new EntryLedger("s");
        ledger.take(entries(0, 3), false);
        ledger.handOut(10);
        ledger.clear();
        assertThat(ledger.size()).isZero();
        ledger.take(entries(0, 1), true);
        assertThat(ledger.handOut(10)).extracting(ConsumerRecord::offset).containsExactly(0L);
    }

    static String id(int i) {
        return (1000 + 7 * i) + "-" + (i % 2);
    }

    static List<StreamEntry> entries(int from, int to) {
        List<StreamEntry> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(entry(id(i), 2));
        }
        return out;
    }

    static StreamEntry entry(String id, int events) {
        List<byte[]> evs = new ArrayList<>();
        for (int k = 0; k < events; k++) {
            evs.add((id + "#" + k).getBytes(StandardCharsets.UTF_8));
        }
        return new StreamEntry(id, evs, 0);
    }
}
