package io.sluice.bench.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;

/**
 * The one line of JSON each scenario ends with, for scripts: every row with its medians, spreads and reference.
 * Written by Jackson; numbers as {@link Numbers#json}: whole numbers without a fraction, others to 4 places,
 * NaN and infinities as null.
 */
public final class JsonLine {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private JsonLine() {
    }

    public static String of(ScenarioResult result, boolean quick) {
        ObjectNode line = NODES.objectNode();
        line.put("scenario", result.scenario());
        line.put("quick", quick);
        line.set("elapsedSeconds", number(result.elapsedSeconds()));
        ArrayNode tables = line.putArray("tables");
        for (Table t : result.tables()) {
            ObjectNode table = tables.addObject();
            table.put("title", t.title());
            table.put("baseline", t.baselineName());
            ArrayNode rows = table.putArray("rows");
            for (Row r : t.rows()) {
                ObjectNode row = rows.addObject();
                row.put("metric", r.metric());
                row.put("unit", r.unit());
                row.put("better", r.better().name().toLowerCase(Locale.ROOT));
                row.set("sluice", sample(r.sluice()));
                row.set("baseline", sample(r.baseline()));
                row.set("reference", r.reference() == null ? NODES.nullNode() : number(r.reference()));
                row.put("losesToReference", r.losesToReference());
                row.put("comparable", r.comparable());
                row.put("notComparable", r.notComparable());
                row.put("vsReference", r.referenceVerdict().name().toLowerCase(Locale.ROOT));
                row.put("vsBaseline", r.baselineVerdict().name().toLowerCase(Locale.ROOT));
                ArrayNode goals = row.putArray("goals");
                for (Goal g : r.goals()) {
                    ObjectNode goal = goals.addObject();
                    goal.put("basis", g.basis().name().toLowerCase(Locale.ROOT));
                    goal.set("factor", number(g.factor()));
                    goal.put("status", g.status(r).name().toLowerCase(Locale.ROOT));
                }
                row.put("note", r.note());
            }
        }
        try {
            return MAPPER.writeValueAsString(line);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a tree of strings and numbers always serializes", e);
        }
    }

    private static com.fasterxml.jackson.databind.JsonNode sample(Sample s) {
        if (s == null) {
            return NODES.nullNode();
        }
        ObjectNode o = NODES.objectNode();
        o.set("median", number(s.median()));
        o.set("min", number(s.min()));
        o.set("max", number(s.max()));
        o.put("runs", s.count());
        return o;
    }

    private static com.fasterxml.jackson.databind.JsonNode number(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return NODES.nullNode();
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return NODES.numberNode((long) v);
        }
        return NODES.numberNode(BigDecimal.valueOf(v).setScale(4, RoundingMode.HALF_EVEN));
    }
}
