package io.sluice.bench.report;

import io.sluice.bench.internal.Latency;
import io.sluice.bench.report.chart.BarChart;
import io.sluice.bench.report.chart.PercentilePlot;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ChartsAndJsonTest {
    private static Document parse(String svg) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void aPercentilePlotIsWellFormedSvgWithOneLinePerSeries() throws Exception {
        Histogram h = Latency.newHistogram();
        for (int i = 1; i <= 10_000; i++) {
            h.recordValue(i * 1_000L);
        }
        String svg = new PercentilePlot("p.svg", "latency <test> & more", "µs", 1_000)
                .histogram("a", h).histogram("b", h).referencePoints("ref", Map.of(50.0, 10.0, 99.0, 90.0)).toSvg();
        Document doc = parse(svg);
        assertThat(doc.getDocumentElement().getNodeName()).isEqualTo("svg");
        assertThat(doc.getElementsByTagName("polyline").getLength()).isEqualTo(3);
        assertThat(svg).contains("latency &lt;test&gt; &amp; more").contains("99.99%");
    }

    @Test
    void aBarChartIsWellFormedAndSaysWhereAValueIsMissing() throws Exception {
        String svg = new BarChart("b.svg", "bars", "msg/s", List.of("Sluice", "raw", "ref"))
                .category("one", 1.0, null, 3.0).toSvg();
        Document doc = parse(svg);
        assertThat(doc.getElementsByTagName("rect").getLength()).isGreaterThanOrEqualTo(3);
        assertThat(svg).contains("n/a");
    }

    @Test
    void theJsonLineCarriesEveryRowWithMediansSpreadsAndNullsForMissingFigures() {
        Table t = Table.builder("t \"quoted\"", "raw").row("P99", "µs", Better.LOWER, Sample.of(1, 2, 3), null, 4.0, "line1\nline2").build();
        ScenarioResult r = new ScenarioResult("s", "title", "ref.txt", List.of(t), List.of(), List.of(), 1.5);
        String json = JsonLine.of(r, true);
        assertThat(json).doesNotContain("\n")
                .contains("\"title\":\"t \\\"quoted\\\"\"")
                .contains("\"sluice\":{\"median\":2,\"min\":1,\"max\":3,\"runs\":3}")
                .contains("\"baseline\":null")
                .contains("\"reference\":4")
                .contains("\"note\":\"line1\\nline2\"");
    }
}
