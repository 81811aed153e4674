package io.sluice.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's embedding example, run as a user runs it: a child JVM started with {@code java @sluice.jvmopts}, and
 * one started without the flags, which must fail at once with a message listing them.
 */
class EmbeddedAppTest {
    @TempDir
    Path dir;

    record Run(int exit, String output) {
    }

    static Run run(List<String> jvmFlags, Path dataDir) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.addAll(jvmFlags);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(EmbeddedApp.class.getName());
        cmd.add(dataDir.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the example exits by itself").isTrue();
        return new Run(p.exitValue(), output);
    }

    @Test
    void theExampleRunsWithTheShippedArgumentFile() throws Exception {
        Path argFile = Path.of("target", "sluice.jvmopts").toAbsolutePath();
        assertThat(argFile).exists();
        assertThat(Files.readString(argFile)).contains("--add-opens=java.base/java.lang=ALL-UNNAMED")
                .contains("-Dchronicle.analytics.disable=true");

        Run run = run(List.of("@" + argFile), dir.resolve("data"));

        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("first order journaled at partition")
                .contains("consumed 1000 orders, total " + (999L * 1000 / 2))
                .contains("lag of group billing: 0");
    }

    @Test
    void withoutTheFlagsOpeningABrokerFailsAtOnceNamingThem() throws Exception {
        Run run = run(List.of(), dir.resolve("data"));

        assertThat(run.exit()).isNotZero();
        assertThat(run.output()).contains("InvalidConfigException")
                .contains("--add-opens=java.base/java.lang=ALL-UNNAMED")
                .contains("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED")
                .contains("java @sluice.jvmopts")
                .doesNotContain("IllegalAccessException");
        assertThat(dir.resolve("data")).doesNotExist();
    }
}
