package io.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.testing.TestBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class SluiceCliTest {
    @TempDir
    Path dir;
    private TestBroker broker;
    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
    private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);

    @BeforeEach
    void start() {
        broker = TestBroker.start(dir);
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private String out() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }

    private int cli(String... args) {
        return SluiceCli.run(args, out, err);
    }

    @ParameterizedTest
    @ValueSource(strings = {"broker", "topics", "produce", "consume", "perf-produce", "perf-consume"})
    void everyCommandExplainsItselfWithHelp(String command) {
        assertThat(cli(command, "--help")).isZero();
        assertThat(out()).contains("usage: sluice " + command);
    }

    @ParameterizedTest
    @ValueSource(strings = {"broker", "produce", "consume", "perf-produce", "perf-consume"})
    void anUnknownFlagIsNamedAndExitsWithTwo(String command) {
        assertThat(cli(command, "--frobnicate", "3")).isEqualTo(SluiceCli.USAGE);
        assertThat(err()).contains("Unknown option").contains("'--frobnicate'").contains("usage: sluice " + command);
    }

    @Test
    void missingOrMalformedValuesAreUsageErrors() {
        assertThat(cli("perf-produce", "--topic", "t", "--records", "ten", "--record-size", "100")).isEqualTo(SluiceCli.USAGE);
        assertThat(err()).contains("Invalid value for option '--records': 'ten' is not a long");
        assertThat(cli("produce")).isEqualTo(SluiceCli.USAGE);
        assertThat(err()).contains("Missing required option: '--topic");
        assertThat(cli("consume", "--topic")).isEqualTo(SluiceCli.USAGE);
        assertThat(err()).contains("Missing required parameter for option '--topic'");
        assertThat(cli("nonsense")).isEqualTo(SluiceCli.USAGE);
        assertThat(cli()).isEqualTo(SluiceCli.USAGE);
        assertThat(cli("topics", "frob")).isEqualTo(SluiceCli.USAGE);
    }

    @Test
    void topicsCreateListAndDescribe() {
        assertThat(cli("topics", "create", "--bootstrap", broker.bootstrap(), "--topic", "clicks", "--partitions", "3")).isZero();
        assertThat(cli("topics", "list", "--bootstrap", broker.bootstrap())).isZero();
        assertThat(cli("topics", "describe", "--bootstrap", broker.bootstrap(), "--topic", "clicks")).isZero();
        assertThat(out()).contains("created topic clicks with 3 partition(s)").contains("clicks\n").contains("partitions 3");
        assertThat(cli("topics", "create", "--bootstrap", broker.bootstrap(), "--topic", "clicks")).isEqualTo(SluiceCli.FAILED);
        assertThat(err()).contains("exists");
    }

    @Test
    void produceSendsEachStdinLineAndConsumePrintsThemBack() {
        broker.broker.createTopic(TopicConfig.of("lines", 1));
        ByteArrayInputStream stdin = new ByteArrayInputStream("one\ntwo\nthree\n".getBytes(StandardCharsets.UTF_8));
        int code;
        try {
            code = new ProduceCommand(stdin).run(new String[] {"--bootstrap", broker.bootstrap(), "--topic", "lines", "--acks", "sync"}, out, err);
        } catch (UsageException e) {
            throw new AssertionError(e);
        }
        assertThat(code).isZero();
        assertThat(err()).contains("3 events acknowledged");
        assertThat(broker.broker.endOffset(new TopicPartition("lines", 0))).isEqualTo(3);

        assertThat(cli("consume", "--bootstrap", broker.bootstrap(), "--topic", "lines", "--from-beginning", "--max", "3")).isZero();
        assertThat(out().lines().toList()).containsExactly("one", "two", "three");
    }

    @Test
    void consumeWithAGroupCommitsWhatItPrinted() {
        broker.broker.createTopic(TopicConfig.of("grp", 1));
        ByteArrayInputStream stdin = new ByteArrayInputStream("a\nb\nc\nd\n".getBytes(StandardCharsets.UTF_8));
        try {
            assertThat(new ProduceCommand(stdin).run(new String[] {"--bootstrap", broker.bootstrap(), "--topic", "grp"}, out, err)).isZero();
        } catch (UsageException e) {
            throw new AssertionError(e);
        }
        assertThat(cli("consume", "--bootstrap", broker.bootstrap(), "--topic", "grp", "--group", "g1", "--from-beginning", "--max", "2")).isZero();
        assertThat(cli("consume", "--bootstrap", broker.bootstrap(), "--topic", "grp", "--group", "g1", "--max", "2")).isZero();
        assertThat(out().lines().toList()).containsExactly("a", "b", "c", "d");
        assertThat(cli("consume", "--bootstrap", broker.bootstrap(), "--topic", "grp", "--group", "g1", "--max", "1",
                "--timeout-ms", "300")).isEqualTo(SluiceCli.FAILED);
    }

    @Test
    void perfProducePrintsAFinalJsonLineWithWhatWasAcknowledged() throws Exception {
        assertThat(cli("perf-produce", "--bootstrap", broker.bootstrap(), "--topic", "perf", "--partitions", "2",
                "--records", "20000", "--record-size", "100", "--clients", "2")).isZero();
        List<String> lines = out().lines().toList();
        JsonNode json = new ObjectMapper().readTree(lines.get(lines.size() - 1));
        assertThat(json.get("records_sent").asLong()).isEqualTo(20_000);
        assertThat(json.get("records_acknowledged").asLong()).isEqualTo(20_000);
        assertThat(json.get("latency_us").get("samples").asLong()).isEqualTo(20_000);
        assertThat(broker.broker.endOffset(new TopicPartition("perf", 0)) + broker.broker.endOffset(new TopicPartition("perf", 1)))
                .isEqualTo(20_000);

        assertThat(cli("perf-consume", "--bootstrap", broker.bootstrap(), "--topic", "perf", "--records", "20000")).isZero();
        List<String> consumed = out().lines().toList();
        JsonNode c = new ObjectMapper().readTree(consumed.get(consumed.size() - 1));
        assertThat(c.get("tool").asText()).isEqualTo("perf-consume");
        assertThat(c.get("records_acknowledged").asLong()).isEqualTo(20_000);
    }

    @Test
    void perfProduceStopsWhenTheBrokerGoesAwayAndStillPrintsTheJsonLine() throws Exception {
        broker.broker.createTopic(TopicConfig.of("gone", 1));
        AtomicInteger code = new AtomicInteger(-1);
        Thread run = new Thread(() -> code.set(cli("perf-produce", "--bootstrap", broker.bootstrap(), "--topic", "gone",
                "--records", "1000000", "--record-size", "10", "--rate", "20000")));
        run.start();
        TopicPartition tp = new TopicPartition("gone", 0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (broker.broker.endOffset(tp) < 1_000 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        broker.stopServer();
        run.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(run.isAlive()).isFalse();
        assertThat(code.get()).isEqualTo(SluiceCli.FAILED);
        List<String> lines = out().lines().toList();
        JsonNode json = new ObjectMapper().readTree(lines.get(lines.size() - 1));
        long acknowledged = json.get("records_acknowledged").asLong();
        assertThat(acknowledged).isPositive().isLessThan(1_000_000);
        assertThat(json.get("first_error").asText()).isNotEmpty();
        assertThat(broker.broker.endOffset(tp)).as("everything acknowledged is stored").isGreaterThanOrEqualTo(acknowledged);
        broker.restartServer();
    }

    @Test
    void ingestHandsOverToTheIngestPipelinesCommand() {
        assertThat(cli("ingest", "--help")).isZero();
    }
}
