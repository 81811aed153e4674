package io.sluice.cli;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.testkit.Await;
import io.sluice.testkit.ClickHouseServer;
import io.sluice.testkit.ServicesExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(ServicesExtension.class)
class IngestCommandTest {
    @TempDir
    Path dir;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return IngestCommand.run(args, b -> { throw new IllegalStateException("no broker in this test"); },
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void helpPrintsUsageAndExitsZero() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("--bootstrap=HOST:PORT").contains("worker-pool");
    }

    @Test
    void unknownOrIncompleteFlagsExitWithTwoAndAMessage() {
        assertThat(run("--bootstrap", "h:1", "--frobnicate", "x")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("Unknown option").contains("'--frobnicate'");
        err.reset();
        assertThat(run("--bootstrap", "h:1", "--topic", "t")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("Missing required options").contains("'--clickhouse=URL'");
        err.reset();
        assertThat(run("--bootstrap", "h:1", "--topic", "t", "--clickhouse", "http://127.0.0.1:1", "--table", "d.t",
                "--strategy", "fast")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("strategy").contains("fast");
        err.reset();
        assertThat(run("--source", "kafka", "--bootstrap", "h:1", "--topic", "t", "--clickhouse", "http://127.0.0.1:1",
                "--table", "d.t", "--strategy", "coalescing")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("must be offset-range for source kafka");
        err.reset();
        assertThat(run("--source", "pigeon", "--bootstrap", "h:1", "--topic", "t", "--clickhouse", "http://127.0.0.1:1",
                "--table", "d.t")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("source").contains("must be sluice or kafka");
    }

    @Test
    void ingestsATopicUntilInterrupted(ClickHouseServer clickHouse) throws Exception {
        String table = idTable(clickHouse, "cli");
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            broker.createTopic(TopicConfig.of("events", 2));
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < 1_000; i++) {
                    producer.send(ProducerRecord.of("events", null, ("{\"id\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
                }
                producer.flush();
            }
            AtomicInteger exit = new AtomicInteger(-1);
            Thread cli = new Thread(() -> exit.set(IngestCommand.run(new String[]{
                    "--bootstrap", "embedded", "--topic", "events", "--clickhouse", clickHouse.url(), "--table", table,
                    "--create-table", "CREATE TABLE IF NOT EXISTS " + table + " (id UInt64) ENGINE = MergeTree ORDER BY id",
                    "--strategy", "journal", "--metrics-interval-s", "1"},
                    bootstrap -> broker::newConsumer, new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8))), "cli");
            cli.start();
            Await.until("1000 rows", Duration.ofSeconds(60), () -> clickHouse.queryLong("SELECT count() FROM " + table) == 1_000);
            // ClickHouse shows the rows before the INSERT's answer reaches the pipeline, which counts them on that
            // answer: interrupting at once could stop it first (a fresh-clone CI run printed rows_inserted=0). Wait
            // for the CLI's own metrics line, as its user reads it, then stop it.
            Await.until("the CLI reports 1000 rows inserted", Duration.ofSeconds(60),
                    () -> out.toString(StandardCharsets.UTF_8).contains("rows_inserted=1000"));
            cli.interrupt();
            cli.join(30_000);
            assertThat(exit.get()).isZero();
        }
        assertThat(clickHouse.queryLong("SELECT uniqExact(id) FROM " + table)).isEqualTo(1_000);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("stopped;").contains("rows_inserted=1000");
    }

    /** A fresh table {@code <db>.events (id UInt64)} in a new database named after {@code prefix}. */
    private static String idTable(ClickHouseServer clickHouse, String prefix) {
        String table = clickHouse.createDatabase(prefix) + ".events";
        clickHouse.execute("CREATE TABLE " + table + " (id UInt64) ENGINE = MergeTree ORDER BY id");
        return table;
    }

    @Test
    void startedBeforeItsTopicExistsItWaitsSaysSoOnceAndIngestsOnceTheTopicIsCreated(ClickHouseServer clickHouse) throws Exception {
        String table = idTable(clickHouse, "cli_wait");
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build())) {
            AtomicInteger exit = new AtomicInteger(-1);
            Thread cli = new Thread(() -> exit.set(IngestCommand.run(new String[]{
                    "--bootstrap", "embedded", "--topic", "later", "--clickhouse", clickHouse.url(), "--table", table,
                    "--metrics-interval-s", "0", "--set", "retry.max.ms=200"},
                    bootstrap -> broker::newConsumer, new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8))), "cli");
            cli.start();
            Await.until("the command says it waits", Duration.ofSeconds(30),
                    () -> out.toString(StandardCharsets.UTF_8).contains("waiting for the topic to be created"));
            assertThat(cli.isAlive()).as("still running, not exited on 'unknown topic'").isTrue();
            broker.createTopic(TopicConfig.of("later", 1));
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < 100; i++) {
                    producer.send(ProducerRecord.of("later", null, ("{\"id\":" + i + "}").getBytes(StandardCharsets.UTF_8)));
                }
                producer.flush();
            }
            Await.until("100 rows", Duration.ofSeconds(60), () -> clickHouse.queryLong("SELECT count() FROM " + table) == 100);
            cli.interrupt();
            cli.join(30_000);
            assertThat(exit.get()).isZero();
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(printed.split("waiting for the topic to be created", -1)).as("said once").hasSize(2);
        assertThat(printed).contains("later");
    }
}
