package io.sluice.bench.report;

/** The one line of JSON each scenario ends with, for scripts: every row with its medians, spreads and reference. */
public final class JsonLine {
    private JsonLine() {
    }

    public static String of(ScenarioResult result, boolean quick) {
        StringBuilder b = new StringBuilder(4096);
        b.append("{\"scenario\":").append(str(result.scenario()))
                .append(",\"quick\":").append(quick)
                .append(",\"elapsedSeconds\":").append(Numbers.json(result.elapsedSeconds()))
                .append(",\"tables\":[");
        boolean firstTable = true;
        for (Table t : result.tables()) {
            b.append(firstTable ? "" : ",");
            firstTable = false;
            b.append("{\"title\":").append(str(t.title())).append(",\"baseline\":").append(str(t.baselineName())).append(",\"rows\":[");
            boolean firstRow = true;
            for (Row r : t.rows()) {
                b.append(firstRow ? "" : ",");
                firstRow = false;
                b.append("{\"metric\":").append(str(r.metric()))
                        .append(",\"unit\":").append(str(r.unit()))
                        .append(",\"better\":").append(str(r.better().name().toLowerCase(java.util.Locale.ROOT)))
                        .append(",\"sluice\":").append(sample(r.sluice()))
                        .append(",\"baseline\":").append(sample(r.baseline()))
                        .append(",\"reference\":").append(r.reference() == null ? "null" : Numbers.json(r.reference()))
                        .append(",\"losesToReference\":").append(r.losesToReference())
                        .append(",\"comparable\":").append(r.comparable())
                        .append(",\"note\":").append(r.note() == null ? "null" : str(r.note()))
                        .append('}');
            }
            b.append("]}");
        }
        return b.append("]}").toString();
    }

    private static String sample(Sample s) {
        if (s == null) {
            return "null";
        }
        return "{\"median\":" + Numbers.json(s.median()) + ",\"min\":" + Numbers.json(s.min()) + ",\"max\":"
                + Numbers.json(s.max()) + ",\"runs\":" + s.count() + "}";
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
