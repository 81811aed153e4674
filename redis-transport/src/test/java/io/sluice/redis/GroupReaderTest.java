package io.sluice.redis;

import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.models.stream.PendingMessage;
import io.sluice.testkit.Await;
import io.sluice.testkit.RedisCluster;
import io.sluice.testkit.RedisServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The packed-stream API ingest's stream strategies store through: StreamWriter, GroupReader, DeadLetterStream. */
@ExtendWith(ServicesExtension.class)
class GroupReaderTest {

    private static List<byte[]> events(String prefix, int n) {
        List<byte[]> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add((prefix + i).getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    /** Appends and waits for every entry's reply; returns the entries the writer made. */
    private static int appendAll(StreamWriter writer, List<byte[]> events) {
        // completed on Lettuce's I/O thread
        List<CompletableFuture<Void>> replies = java.util.Collections.synchronizedList(new ArrayList<>());
        int entries = writer.append(events, (from, to, error) -> {
            CompletableFuture<Void> f = new CompletableFuture<>();
            replies.add(f);
            if (error != null) {
                f.completeExceptionally(error);
            } else {
                f.complete(null);
            }
        });
        writer.flush();
        Await.until("every XADD answered", Duration.ofSeconds(10), () -> replies.size() == entries);
        replies.forEach(CompletableFuture::join);
        return entries;
    }

    /** Appends through a writer of its own on {@code endpoint}, closed after every reply came. */
    private static int appendAll(RedisEndpoint endpoint, String stream, List<byte[]> events) {
        try (StreamWriter writer = new StreamWriter(endpoint, stream)) {
            return appendAll(writer, events);
        }
    }

    private static List<String> strings(List<StreamEntry> entries) {
        List<String> out = new ArrayList<>();
        for (StreamEntry e : entries) {
            e.events().forEach(b -> out.add(new String(b, StandardCharsets.UTF_8)));
        }
        return out;
    }

    @Test
    void ownPendingEntriesArePagedAfterAnIdWhileTheEarlierOnesAreStillPending(RedisServer redis) {
        String stream = "own-" + UUID.randomUUID();
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             GroupReader reader = new GroupReader(endpoint, stream, "ingest", "m1")) {
            reader.open();
            assertThat(appendAll(endpoint, stream, events("e", 2 * StreamWriter.EVENTS_PER_ENTRY + 1))).isEqualTo(3);
            List<StreamEntry> read = reader.read(100, 1, 0, () -> true);
            assertThat(read).hasSize(3);
            List<StreamEntry> first = reader.readOwnPending("0", 2);
            assertThat(first).extracting(StreamEntry::id).containsExactly(read.get(0).id(), read.get(1).id());
            List<StreamEntry> next = reader.readOwnPending(first.get(1).id(), 2);
            assertThat(next).extracting(StreamEntry::id).as("on after the page, none acknowledged").containsExactly(read.get(2).id());
            assertThat(reader.readOwnPending(next.get(0).id(), 2)).isEmpty();
            reader.acknowledge(read.get(0).id());
            assertThat(reader.readOwnPending("0", 10)).extracting(StreamEntry::id).containsExactly(read.get(1).id(), read.get(2).id());
        }
    }

    @Test
    void packedEventsAreReadInOrderAndLeaveTheStreamOnceAcknowledged(RedisServer redis) {
        String stream = "packed-" + UUID.randomUUID();
        List<byte[]> events = events("e", 2 * StreamWriter.EVENTS_PER_ENTRY + 88);
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             GroupReader reader = new GroupReader(endpoint, stream, "ingest", "m1")) {
            reader.open();
            assertThat(appendAll(endpoint, stream, events)).isEqualTo(3);
            List<StreamEntry> read = reader.read(100, 0, () -> true);

            assertThat(read).hasSize(3);
            assertThat(strings(read)).hasSize(events.size()).startsWith("e0", "e1").endsWith("e599");
            assertThat(read).allSatisfy(e -> assertThat(e.deliveries()).isZero());
            assertThat(reader.read(100, 0, () -> true)).as("nothing new").isEmpty();
            assertThat(reader.readOwnPending(100)).extracting(StreamEntry::id).containsExactlyElementsOf(read.stream().map(StreamEntry::id).toList());

            reader.acknowledge(read.stream().map(StreamEntry::id).toArray(String[]::new));
            Await.until("the acknowledged entries trimmed", Duration.ofSeconds(10), () -> {
                reader.trimAcknowledged();
                return redis.commandLong("XLEN", stream) == 0;
            });
            assertThat(reader.readOwnPending(100)).isEmpty();
        }
    }

    @Test
    void theTailOfAcknowledgementsInQuickSuccessionIsTrimmedAtOnceOnRequest(RedisServer redis) {
        String stream = "tail-" + UUID.randomUUID();
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             GroupReader reader = new GroupReader(endpoint, stream, "ingest", "m1")) {
            reader.open();
            assertThat(appendAll(endpoint, stream, events("e", 2 * StreamWriter.EVENTS_PER_ENTRY))).isEqualTo(2);
            List<StreamEntry> read = reader.read(100, 0, () -> true);
            reader.acknowledge(read.get(0).id()); // trims
            reader.acknowledge(read.get(1).id()); // within 100 ms of that trim: may leave this entry
            reader.trimAcknowledgedNow();
            assertThat(redis.commandLong("XLEN", stream)).as("no tail after the last acknowledgement").isZero();
        }
    }

    @Test
    void anIdleEntryIsTakenOverWithItsDeliveryCountAndKeepingItResetsItsIdleTime(RedisServer redis) {
        String stream = "takeover-" + UUID.randomUUID();
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             GroupReader dead = new GroupReader(endpoint, stream, "ingest", "dead");
             GroupReader live = new GroupReader(endpoint, stream, "ingest", "live");
             RedisEndpoint.Link check = endpoint.connect()) {
            dead.open();
            live.open();
            appendAll(endpoint, stream, events("x", 3));
            String id = dead.read(10, 0, () -> true).get(0).id();
            byte[] key = stream.getBytes(StandardCharsets.UTF_8);
            byte[] group = "ingest".getBytes(StandardCharsets.UTF_8);
            Await.until("the entry idle for 300 ms", Duration.ofSeconds(10), () -> idleMs(check, key, group) >= 300);
            dead.keep(List.of(id));
            assertThat(idleMs(check, key, group)).as("idle time after keep").isLessThan(300);

            List<StreamEntry> taken = new ArrayList<>();
            Await.until("the live member took the entry over", Duration.ofSeconds(10), () -> {
                GroupReader.Claimed c = live.claimIdle("0-0", 200, 10);
                taken.addAll(c.entries());
                return !taken.isEmpty();
            });
            assertThat(taken).singleElement().satisfies(e -> {
                assertThat(e.id()).isEqualTo(id);
                assertThat(e.deliveries()).isEqualTo(2);
                assertThat(strings(List.of(e))).containsExactly("x0", "x1", "x2");
            });
            assertThat(dead.readOwnPending(10)).as("no longer the dead member's").isEmpty();
        }
    }

    @Test
    void anEntryDeliveredMoreThanMaxDeliveriesIsGivenUpToTheDeadLettersAndAcknowledgedInsteadOfHandedOut(RedisServer redis) {
        String stream = "poison-" + UUID.randomUUID();
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             GroupReader dead = new GroupReader(endpoint, stream, "ingest", "dead");
             GroupReader live = new GroupReader(endpoint, stream, "ingest", "live");
             DeadLetterStream letters = new DeadLetterStream(endpoint, stream + ":dead-letters");
             RedisEndpoint.Link check = endpoint.connect()) {
            dead.open();
            live.open();
            appendAll(endpoint, stream, events("p", 2));
            String id = dead.read(10, 0, () -> true).get(0).id(); // delivered once, never acknowledged
            List<StreamEntry> handedOut = new ArrayList<>();
            Await.until("the entry taken over once", Duration.ofSeconds(10), () -> {
                handedOut.addAll(live.claimIdle("0-0", 100, 10, 2, letters).entries());
                return !handedOut.isEmpty();
            });
            assertThat(handedOut).singleElement().satisfies(e -> assertThat(e.deliveries()).isEqualTo(2));
            List<GroupReader.Claimed> steps = new ArrayList<>();
            Await.until("the entry given up after 2 deliveries", Duration.ofSeconds(10), () -> {
                GroupReader.Claimed c = live.claimIdle("0-0", 100, 10, 2, letters);
                steps.add(c);
                return c.deadLetteredEntries() > 0;
            });
            GroupReader.Claimed last = steps.get(steps.size() - 1);
            assertThat(last.entries()).as("not handed out").isEmpty();
            assertThat(last.deadLetters()).isEqualTo(2);
            List<StreamMessage<byte[], byte[]>> stored = check.sync().xrange((stream + ":dead-letters").getBytes(StandardCharsets.UTF_8),
                    Range.create("-", "+"));
            assertThat(stored).hasSize(2);
            assertThat(text(stored.get(1).getBody())).containsEntry("payload", "p1").containsEntry("source", stream + "/" + id + "#1")
                    .containsEntry("group", "ingest").containsEntry("deliveries", "2");
            assertThat(live.readOwnPending(10)).as("acknowledged").isEmpty();
        }
    }

    private static long idleMs(RedisEndpoint.Link link, byte[] key, byte[] group) {
        List<PendingMessage> pending = link.sync().xpending(key, group, Range.create("-", "+"), Limit.from(10));
        return pending.isEmpty() ? -1 : pending.get(0).getMsSinceLastDelivery();
    }

    @Test
    void aLostGroupIsReportedAndRecreated(RedisServer redis) {
        String stream = "lost-" + UUID.randomUUID();
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             GroupReader reader = new GroupReader(endpoint, stream, "ingest", "m1")) {
            reader.open();
            redis.command("XGROUP", "DESTROY", stream, "ingest");

            assertThatThrownBy(() -> reader.read(10, 0, () -> true)).isInstanceOf(GroupReader.GroupLostException.class);
            appendAll(endpoint, stream, events("y", 1));
            assertThat(strings(reader.read(10, 0, () -> true))).containsExactly("y0");
        }
    }

    @Test
    void aMalformedEntryComesBackFlaggedAmongTheGoodOnesOnEveryRead(RedisServer redis) {
        String stream = "malformed-" + UUID.randomUUID();
        byte[] key = stream.getBytes(StandardCharsets.UTF_8);
        byte[] corrupt = {2, 'o', 'k', (byte) 0x90}; // event "ok", then a varint cut off by the field's end
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             GroupReader reader = new GroupReader(endpoint, stream, "ingest", "m1");
             RedisEndpoint.Link raw = endpoint.connect()) {
            reader.open();
            try (StreamWriter writer = new StreamWriter(endpoint, stream)) {
                appendAll(writer, events("a", 2));
                String badId = raw.sync().xadd(key, "b".getBytes(StandardCharsets.US_ASCII), corrupt);
                appendAll(writer, events("c", 2));

                List<StreamEntry> read = reader.read(10, 0, () -> true);
                assertThat(read).hasSize(3);
                assertThat(strings(read)).containsExactly("a0", "a1", "c0", "c1");
                assertThat(read.get(1)).satisfies(e -> {
                    assertThat(e.id()).isEqualTo(badId);
                    assertThat(e.isMalformed()).isTrue();
                    assertThat(e.events()).isEmpty();
                    assertThat(e.malformed().entryId()).isEqualTo(badId);
                    assertThat(e.malformed().offset()).isEqualTo(3);
                    assertThat(e.malformed().field()).isEqualTo(corrupt);
                });
                assertThat(read.get(0).isMalformed()).isFalse();
                // re-read (own pending list): still flagged, the read still succeeds
                assertThat(reader.readOwnPending(10)).extracting(StreamEntry::isMalformed).containsExactly(false, true, false);
            }
        }
    }

    @Test
    void deadLettersAreOneEntryPerEventWithTheirErrorAndSource(RedisServer redis) {
        String key = "dead-" + UUID.randomUUID();
        try (RedisEndpoint endpoint = new RedisEndpoint(redis.url(), false, 1_000);
             DeadLetterStream dead = new DeadLetterStream(endpoint, key);
             RedisEndpoint.Link check = endpoint.connect()) {
            dead.append(List.of(new DeadLetterStream.Letter("p1".getBytes(StandardCharsets.UTF_8), "bad row", "s/1-0#0"),
                    new DeadLetterStream.Letter("p2".getBytes(StandardCharsets.UTF_8), "bad row", "s/1-0#1")));
            List<StreamMessage<byte[], byte[]>> entries = check.sync().xrange(key.getBytes(StandardCharsets.UTF_8), Range.create("-", "+"));
            assertThat(entries).hasSize(2);
            assertThat(text(entries.get(1).getBody())).containsEntry("payload", "p2").containsEntry("error", "bad row")
                    .containsEntry("source", "s/1-0#1");
        }
    }

    private static Map<String, String> text(Map<byte[], byte[]> body) {
        Map<String, String> out = new java.util.HashMap<>();
        body.forEach((k, v) -> out.put(new String(k, StandardCharsets.UTF_8), new String(v, StandardCharsets.UTF_8)));
        return out;
    }

    @Test
    void onARedisClusterTheStreamItsGroupAndItsDeadLettersWork() {
        assumeTrue(RedisCluster.isInstalled(), "redis-server and redis-cli are needed");
        String stream = "{packed}:events";
        try (RedisCluster cluster = RedisCluster.start(3, 0);
             RedisEndpoint endpoint = new RedisEndpoint(cluster.url(), true, 1_000);
             GroupReader reader = new GroupReader(endpoint, stream, "ingest", "m1");
             DeadLetterStream dead = new DeadLetterStream(endpoint, stream + ":dead-letters")) {
            reader.open();
            appendAll(endpoint, stream, events("c", 300));
            List<StreamEntry> read = reader.read(10, 0, () -> true);
            assertThat(strings(read)).hasSize(300).startsWith("c0").endsWith("c299");
            dead.append(List.of(new DeadLetterStream.Letter(new byte[]{1}, "why", stream + "/" + read.get(0).id() + "#0")));
            reader.acknowledge(read.stream().map(StreamEntry::id).toArray(String[]::new));
            RedisCluster.Node owner = cluster.masterOf(stream);
            Await.until("the acknowledged entries trimmed", Duration.ofSeconds(10), () -> {
                reader.trimAcknowledged();
                return owner.xlen(stream) == 0;
            });
            assertThat(owner.xlen(stream + ":dead-letters")).isEqualTo(1);
        }
    }
}
