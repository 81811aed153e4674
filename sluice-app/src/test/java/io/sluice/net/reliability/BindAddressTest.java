package io.sluice.net.reliability;

import io.sluice.core.TopicConfig;
import io.sluice.cli.SluiceCli;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteAdmin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * <b>Promise:</b> {@code sluice broker} listens on loopback unless told otherwise; listening on all interfaces is an
 * explicit {@code --bind} that logs a warning when authentication is off, and no warning (and never the token) when a
 * token is set. Both listeners (binary protocol and HTTP) warn. Checked on the real command in a child JVM, reading its
 * log (stderr). Only loopback is connected to.
 */
class BindAddressTest {
    private static final Pattern LISTENING = Pattern.compile("binary protocol on ([0-9.:]+):(\\d+)");
    /** BrokerServer's warning for a non-loopback bind without a token. */
    private static final Pattern EXPOSED_WARNING = Pattern.compile("WARN .*listening on 0\\.0\\.0\\.0 without authentication");
    /** The HTTP listener's warning (BindCheck) for the same situation. */
    private static final Pattern HTTP_EXPOSED_WARNING = Pattern.compile("WARN .*HTTP listener binds 0\\.0\\.0\\.0 .*authentication OFF");
    private static final Pattern HTTP_LISTENING = Pattern.compile("HTTP on ([0-9.:]+):(\\d+)");
    private static final String TOKEN = "s3cret-token-for-bind-test";

    @TempDir
    Path dir;

    @Test
    void byDefaultTheBrokerListensOnLoopbackOnlyAndWarnsAboutNothing() throws Exception {
        try (BrokerProcess broker = start("default", Map.of())) {
            Matcher m = broker.awaitLine(LISTENING, Duration.ofSeconds(60));
            assertThat(m.group(1)).isEqualTo("127.0.0.1");
            try (RemoteAdmin admin = new RemoteAdmin("127.0.0.1:" + m.group(2))) {
                admin.createTopic(TopicConfig.of("t", 1));
            }
            assertThat(broker.log()).doesNotContainPattern(EXPOSED_WARNING);
            report("default", m.group(1), broker.log());
        }
    }

    @Test
    void bindingAllInterfacesWithoutATokenLogsAWarning() throws Exception {
        try (BrokerProcess broker = start("exposed", Map.of(), "--bind", "0.0.0.0",
                "--http-port", Integer.toString(BrokerProcess.freePort()))) {
            broker.awaitLine(HTTP_LISTENING, Duration.ofSeconds(60));
            Matcher m = broker.awaitLine(LISTENING, Duration.ofSeconds(60));
            assertThat(java.net.InetAddress.getByName(m.group(1)).isAnyLocalAddress()).as("wildcard address %s", m.group(1)).isTrue();
            awaitLog(broker, EXPOSED_WARNING);
            awaitLog(broker, HTTP_EXPOSED_WARNING);
            report("--bind 0.0.0.0, no token", m.group(1), broker.log());
        }
    }

    @Test
    void bindingAllInterfacesWithATokenDoesNotWarnAndNeverLogsTheToken() throws Exception {
        try (BrokerProcess broker = start("token", Map.of("SLUICE_AUTH_TOKEN", TOKEN), "--bind", "0.0.0.0")) {
            Matcher m = broker.awaitLine(LISTENING, Duration.ofSeconds(60));
            String bootstrap = "127.0.0.1:" + m.group(2);
            try (RemoteAdmin admin = new RemoteAdmin(ClientConfig.builder(bootstrap).authToken(TOKEN).build())) {
                admin.createTopic(TopicConfig.of("t", 1)); // the broker is up and the token works
            }
            assertThat(broker.log()).doesNotContainPattern(EXPOSED_WARNING).doesNotContain(TOKEN);
            report("--bind 0.0.0.0 with token", m.group(1), broker.log());
        }
    }

    /** {@code sluice broker} on free ports; HTTP off unless {@code extra} sets {@code --http-port}. */
    private BrokerProcess start(String name, Map<String, String> env, String... extra) throws Exception {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(
                "broker", "--data-dir", dir.resolve(name).toString(), "--port", "0"));
        if (!java.util.List.of(extra).contains("--http-port")) {
            args.addAll(java.util.List.of("--http-port", "0"));
        }
        args.addAll(java.util.List.of(extra));
        return BrokerProcess.start(SluiceCli.class, dir.resolve(name + ".log"), "128m", env, args.toArray(String[]::new));
    }

    /** The warning is logged while binding, before the listening line; poll the log file with a deadline anyway. */
    private static void awaitLog(BrokerProcess broker, Pattern pattern) {
        io.sluice.testkit.Await.until(() -> "log line '" + pattern + "'; log:\n" + broker.log(), Duration.ofSeconds(30),
                () -> pattern.matcher(broker.log()).find());
    }

    private static void report(String mode, String bound, String log) {
        String warning = String.join(" | ", log.lines()
                .filter(l -> EXPOSED_WARNING.matcher(l).find() || HTTP_EXPOSED_WARNING.matcher(l).find()).toList());
        warning = warning.isEmpty() ? "(no warning)" : warning;
        System.out.println("[reliability] BindAddressTest " + mode + ": bound " + bound + "; " + warning);
    }
}
