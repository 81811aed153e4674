package io.sluice.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/configuration.md's tables are generated from the settings' definitions; this test fails when they drift.
 * Regenerate with {@code ./mvnw -pl sluice-app -am verify -Dtest=ConfigurationDocsTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dsluice.docs.regenerate=true}.
 */
class ConfigurationDocsTest {
    static final Path DOC = Path.of("..", "docs", "configuration.md");

    @Test
    void theSettingsTablesInTheDocsAreTheDefinitions() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        String generated = withTables(doc, BrokerSettings.markdownTables());
        if (Boolean.getBoolean("sluice.docs.regenerate")) {
            Files.writeString(DOC, generated, StandardCharsets.UTF_8);
            doc = generated;
        }
        assertThat(doc).as("docs/configuration.md differs from the definitions; regenerate it with "
                + "-Dsluice.docs.regenerate=true (see this test's Javadoc)").isEqualTo(generated);
    }

    /** Replaces what lies between {@code <!-- settings:NAME -->} and {@code <!-- /settings:NAME -->} by the table. */
    static String withTables(String doc, Map<String, String> tables) {
        String result = doc;
        for (Map.Entry<String, String> e : tables.entrySet()) {
            String open = "<!-- settings:" + e.getKey() + " -->\n";
            String close = "<!-- /settings:" + e.getKey() + " -->";
            int a = result.indexOf(open);
            int b = result.indexOf(close);
            assertThat(a).as("docs/configuration.md has a " + open.strip() + " section").isGreaterThanOrEqualTo(0);
            assertThat(b).as("docs/configuration.md closes " + open.strip()).isGreaterThan(a);
            result = result.substring(0, a + open.length()) + e.getValue() + result.substring(b);
        }
        return result;
    }
}
