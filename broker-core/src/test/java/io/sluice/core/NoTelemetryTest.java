package io.sluice.core;

import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Sluice never sends usage data, even in a JVM started without
 * {@code -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true} (an application embedding Sluice
 * without {@code sluice.jvmopts}). Chronicle reads those switches once, when its classes initialise, so Sluice must
 * set them before the first Chronicle class loads. The build passes the flags to every test JVM, so this test starts
 * a child JVM without them, logging class loading ({@code -Xlog:class+load}) to the same stream as the child's own
 * record of each {@code System.setProperty}: opening a broker must set both switches before any
 * {@code net.openhft.chronicle} class is loaded. The same child touching Chronicle Queue directly, before any Sluice
 * code, loads Chronicle with the switches unset: what the test would see if Sluice stopped setting them, or set them
 * too late.
 */
class NoTelemetryTest {
    private static final String SET_ANALYTICS = "set chronicle.analytics.disable=true";
    private static final String SET_ANNOUNCER = "set chronicle.announcer.disable=true";
    private static final String CHRONICLE_CLASS = "net.openhft.chronicle.";

    @TempDir
    Path dir;

    @Test
    void chronicleAnalyticsIsNotOnTheClassPath() {
        assertThatThrownBy(() -> Class.forName("net.openhft.chronicle.analytics.Analytics"))
                .isInstanceOf(ClassNotFoundException.class);
    }

    @Test
    void aBrokerOpenedWithoutTheFlagsSetsBothSwitchesBeforeTheFirstChronicleClassLoads() throws Exception {
        List<String> out = runChild("broker");
        assertThat(out).contains("before: analytics=null announcer=null", "appended offset 0",
                "after: analytics=true announcer=true");
        int analytics = out.indexOf(SET_ANALYTICS);
        int announcer = out.indexOf(SET_ANNOUNCER);
        int firstChronicle = firstChronicleClass(out);
        assertThat(firstChronicle).as("Chronicle was loaded at all").isPositive();
        assertThat(analytics).as(String.join("\n", out)).isBetween(0, firstChronicle);
        assertThat(announcer).isBetween(0, firstChronicle);
    }

    @Test
    void chronicleUsedDirectlyWithoutTheFlagsLoadsWithTheSwitchesUnset() throws Exception {
        List<String> out = runChild("raw-chronicle");
        assertThat(out).contains("before: analytics=null announcer=null", "raw chronicle written",
                "after: analytics=null announcer=null");
        assertThat(firstChronicleClass(out)).isPositive();
        assertThat(out).doesNotContain(SET_ANALYTICS, SET_ANNOUNCER);
    }

    private static int firstChronicleClass(List<String> out) {
        for (int i = 0; i < out.size(); i++) {
            if (out.get(i).contains(CHRONICLE_CLASS) && out.get(i).contains("source:")) {
                return i;
            }
        }
        return -1;
    }

    /** Runs {@link Child} with the Chronicle add-opens but without any {@code -Dchronicle.*} flag; its output lines. */
    private List<String> runChild(String mode) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-Xlog:class+load=info:stdout");
        for (String a : System.getProperty("sluice.jvm.args", "").trim().split("\\s+")) {
            if (!a.isEmpty() && !a.startsWith("-Dchronicle.")) {
                cmd.add(a);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Child.class.getName());
        cmd.add(mode);
        cmd.add(dir.toString());
        assertThat(String.join(" ", cmd)).doesNotContain("-Dchronicle.");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] output = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(output, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        return out.lines().toList();
    }

    /**
     * The child JVM: records every {@code System.setProperty} on stdout (flushed, so it interleaves with the JVM's
     * class-load log), then {@code broker} opens a Sluice broker and appends; {@code raw-chronicle} writes a queue.
     */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            Properties recording = new Properties() {
                private static final long serialVersionUID = 1L;

                @Override
                public synchronized Object setProperty(String key, String value) {
                    System.out.println("set " + key + "=" + value);
                    System.out.flush();
                    return super.setProperty(key, value);
                }
            };
            recording.putAll(System.getProperties());
            System.setProperties(recording);
            System.out.println("before: " + switches());
            Path dir = Path.of(args[1]);
            if (args[0].equals("broker")) {
                try (Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).build());
                     Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                    broker.createTopic(TopicConfig.of("t", 1));
                    RecordMetadata md = producer.send(ProducerRecord.of("t", "k", "v")).get(30, TimeUnit.SECONDS);
                    System.out.println("appended offset " + md.offset());
                }
            } else {
                RawChronicle.write(dir.resolve("raw")); // in a class of its own: Child itself names no Chronicle type
                System.out.println("raw chronicle written");
            }
            System.out.println("after: " + switches());
            System.out.flush();
        }

        private static String switches() {
            return "analytics=" + System.getProperty("chronicle.analytics.disable")
                    + " announcer=" + System.getProperty("chronicle.announcer.disable");
        }
    }

    /** Chronicle Queue used directly, as an application would without Sluice. */
    static final class RawChronicle {
        static void write(Path dir) {
            try (ChronicleQueue queue = SingleChronicleQueueBuilder.binary(dir).build();
                 ExcerptAppender appender = queue.createAppender()) {
                appender.writeText("x");
            }
        }
    }
}
