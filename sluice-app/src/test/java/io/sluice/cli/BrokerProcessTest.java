package io.sluice.cli;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.RemoteAdmin;
import io.sluice.net.client.RemoteProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code sluice broker} as a real process: it serves, and SIGTERM shuts it down gracefully with nothing lost. */
class BrokerProcessTest {
    private static final Pattern LISTENING = Pattern.compile("binary protocol on ([0-9.]+):(\\d+)");

    @TempDir
    Path dir;

    private static Process startBroker(Path dataDir) throws Exception {
        return startBroker(dataDir, 0);
    }

    private static Process startBroker(Path dataDir, int httpPort, String... extra) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        for (String a : System.getProperty("sluice.jvm.args", "").trim().split("\\s+")) {
            if (!a.isEmpty()) {
                cmd.add(a);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(SluiceCli.class.getName());
        cmd.addAll(List.of("broker", "--data-dir", dataDir.toString(), "--port", "0", "--http-port", Integer.toString(httpPort)));
        cmd.addAll(List.of(extra));
        return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    @Test
    void sigtermAnswersWhatIsInFlightDrainsToTheJournalAndExits() throws Exception {
        Path data = dir.resolve("data");
        Process broker = startBroker(data);
        try {
            BufferedReader stdout = new BufferedReader(new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8));
            String bootstrap = null;
            String line;
            while (bootstrap == null && (line = stdout.readLine()) != null) {
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    bootstrap = m.group(1) + ":" + m.group(2);
                }
            }
            assertThat(bootstrap).as("broker announced its port").isNotNull();
            try (RemoteAdmin admin = new RemoteAdmin(bootstrap)) {
                admin.createTopic(TopicConfig.of("events", 2));
            }
            try (RemoteProducer producer = new RemoteProducer(bootstrap, ProducerConfig.DEFAULT)) {
                for (int i = 0; i < 5_000; i++) {
                    producer.send(ProducerRecord.of("events", null, "e" + i));
                }
                producer.flush();
            }
            // SIGTERM by pid (Process.destroy would also close our end of its stdout)
            assertThat(new ProcessBuilder("kill", "-TERM", Long.toString(broker.pid())).start().waitFor()).isZero();
            assertThat(broker.waitFor(60, TimeUnit.SECONDS)).isTrue();
            List<String> rest = new ArrayList<>();
            while ((line = stdout.readLine()) != null) {
                rest.add(line);
            }
            assertThat(rest).contains("sluice broker: stopped");
        } finally {
            broker.destroyForcibly();
        }
        try (Broker reopened = Broker.open(BrokerConfig.builder(data).build())) {
            assertThat(reopened.endOffset(new TopicPartition("events", 0)) + reopened.endOffset(new TopicPartition("events", 1)))
                    .isEqualTo(5_000);
        }
    }

    @Test
    void eventsPostedOverHttpAreConsumedOverTheBinaryProtocolOfTheSameProcess() throws Exception {
        int httpPort;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            httpPort = free.getLocalPort();
        }
        Process broker = startBroker(dir.resolve("data"), httpPort);
        try {
            BufferedReader stdout = new BufferedReader(new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8));
            String bootstrap = null;
            String line;
            while (bootstrap == null && (line = stdout.readLine()) != null) {
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    bootstrap = m.group(1) + ":" + m.group(2);
                }
            }
            assertThat(bootstrap).isNotNull();
            try (RemoteAdmin admin = new RemoteAdmin(bootstrap)) {
                admin.createTopic(TopicConfig.of("web", 1));
            }
            java.net.http.HttpResponse<String> posted = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + httpPort + "/v1/topics/web/events"))
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"n\":1}\n{\"n\":2}\n")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(posted.statusCode()).isEqualTo(200);
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            int code = SluiceCli.run(new String[] {"consume", "--bootstrap", bootstrap, "--topic", "web", "--from-beginning", "--max", "2"},
                    new java.io.PrintStream(out, true, StandardCharsets.UTF_8), System.err);
            assertThat(code).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).containsExactly("{\"n\":1}", "{\"n\":2}");
        } finally {
            broker.destroyForcibly();
            broker.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void kafkaClientsProduceOnTheKafkaPortAndSluiceConsumersReadTheSameRecords() throws Exception {
        Pattern kafkaListening = Pattern.compile("Kafka protocol on ([0-9.]+):(\\d+)");
        Process broker = startBroker(dir.resolve("data"), 0, "--kafka-port", "0");
        try {
            BufferedReader stdout = new BufferedReader(new InputStreamReader(broker.getInputStream(), StandardCharsets.UTF_8));
            String bootstrap = null;
            String kafka = null;
            String line;
            while (kafka == null && (line = stdout.readLine()) != null) {
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    bootstrap = m.group(1) + ":" + m.group(2);
                }
                Matcher k = kafkaListening.matcher(line);
                if (k.find()) {
                    kafka = k.group(1) + ":" + k.group(2);
                }
            }
            assertThat(bootstrap).isNotNull();
            assertThat(kafka).as("broker announced its Kafka port").isNotNull();
            try (RemoteAdmin admin = new RemoteAdmin(bootstrap)) {
                admin.createTopic(TopicConfig.of("mixed", 1));
            }
            java.util.Properties props = new java.util.Properties();
            props.put("bootstrap.servers", kafka);
            props.put("key.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
            props.put("value.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
            try (org.apache.kafka.clients.producer.KafkaProducer<String, String> producer =
                         new org.apache.kafka.clients.producer.KafkaProducer<>(props)) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("mixed", "k", "kafka-" + i)).get();
                }
            }
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            int code = SluiceCli.run(new String[] {"consume", "--bootstrap", bootstrap, "--topic", "mixed", "--from-beginning", "--max", "3"},
                    new java.io.PrintStream(out, true, StandardCharsets.UTF_8), System.err);
            assertThat(code).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).containsExactly("kafka-0", "kafka-1", "kafka-2");
        } finally {
            broker.destroyForcibly();
            broker.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
