package io.sluice.net.http.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.sluice.core.Broker;
import io.sluice.core.GroupAdmin;
import io.sluice.core.GroupStatus;
import io.sluice.core.OffsetResetPlan;
import io.sluice.core.OffsetResetSpec;
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.TopicDescription;
import io.sluice.core.TopicPartition;

import java.io.IOException;
import java.util.List;
import java.util.Set;

/**
 * {@code GET /v1/groups}, {@code GET /v1/groups/{group}}, {@code POST /v1/groups/{group}/reset-offsets},
 * {@code DELETE /v1/topics/{topic}} and {@code PATCH /v1/topics/{topic}} (retention). Stateless.
 */
final class GroupEndpoints {
    static final int MAX_BODY_BYTES = 64 * 1024;
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Set<String> RESET_FIELDS = Set.of("topic", "reset", "value", "execute");
    private static final Set<String> ALTER_FIELDS = Set.of("retentionMillis", "retentionBytes");

    private GroupEndpoints() {
    }

    static FullHttpResponse list(ByteBufAllocator alloc, Broker broker) {
        List<GroupStatus> groups = new GroupAdmin(broker).describeAll();
        return JsonResponses.json(alloc, HttpResponseStatus.OK, json -> {
            json.writeStartObject();
            json.writeArrayFieldStart("groups");
            for (GroupStatus g : groups) {
                write(json, g);
            }
            json.writeEndArray();
            json.writeEndObject();
        });
    }

    static FullHttpResponse describe(ByteBufAllocator alloc, Broker broker, String group) {
        GroupStatus status = new GroupAdmin(broker).describe(group);
        return JsonResponses.json(alloc, HttpResponseStatus.OK, json -> write(json, status));
    }

    /**
     * Body: {@code {"topic":"orders","reset":"to-datetime","value":"2026-11-23T18:00:00Z","execute":true}}; reset is
     * one of to-earliest, to-latest, to-offset, to-datetime, shift-by; value is the offset, the ISO-8601 date-time or
     * the shift; without {@code "execute":true} it is a dry run.
     */
    static FullHttpResponse reset(ByteBufAllocator alloc, Broker broker, String group, FullHttpRequest request) {
        JsonNode body = body(request, RESET_FIELDS, "{\"topic\":\"orders\",\"reset\":\"to-earliest\",\"execute\":true}");
        JsonNode topic = body.get("topic");
        if (topic == null || !topic.isTextual()) {
            throw InvalidConfigException.of("topic", topic, "must be a string");
        }
        JsonNode reset = body.get("reset");
        if (reset == null || !reset.isTextual()) {
            throw InvalidConfigException.of("reset", reset, "must be one of to-earliest, to-latest, to-offset, to-datetime, shift-by");
        }
        OffsetResetSpec.Kind kind = OffsetResetSpec.kindOf(reset.asText());
        JsonNode value = body.get("value");
        long v = 0;
        switch (kind) {
            case TO_DATETIME -> {
                if (value == null || !value.isTextual()) {
                    throw InvalidConfigException.of("value", value, "must be an ISO-8601 date-time string for to-datetime");
                }
                v = OffsetResetSpec.parseDatetime(value.asText()).toEpochMilli();
            }
            case TO_OFFSET, SHIFT_BY -> {
                if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
                    throw InvalidConfigException.of("value", value, "must be an integer for " + reset.asText());
                }
                v = value.longValue();
            }
            default -> {
                if (value != null) {
                    throw InvalidConfigException.of("value", value, "must be absent for " + reset.asText());
                }
            }
        }
        JsonNode execute = body.get("execute");
        if (execute != null && !execute.isBoolean()) {
            throw InvalidConfigException.of("execute", execute, "must be true or false");
        }
        OffsetResetPlan plan = new GroupAdmin(broker).resetOffsets(group, topic.asText(), new OffsetResetSpec(kind, v),
                execute != null && execute.booleanValue());
        return JsonResponses.json(alloc, HttpResponseStatus.OK, json -> {
            json.writeStartObject();
            json.writeStringField("group", plan.groupId());
            json.writeStringField("topic", plan.topic());
            json.writeBooleanField("executed", plan.executed());
            json.writeArrayFieldStart("partitions");
            for (OffsetResetPlan.Row r : plan.partitions()) {
                json.writeStartObject();
                json.writeNumberField("partition", r.partition());
                json.writeNumberField("committed", r.committed());
                json.writeNumberField("target", r.target());
                json.writeNumberField("startOffset", r.startOffset());
                json.writeNumberField("endOffset", r.endOffset());
                json.writeEndObject();
            }
            json.writeEndArray();
            json.writeEndObject();
        });
    }

    static FullHttpResponse deleteTopic(ByteBufAllocator alloc, Broker broker, String topic) {
        broker.deleteTopic(topic);
        return JsonResponses.json(alloc, HttpResponseStatus.OK, json -> {
            json.writeStartObject();
            json.writeStringField("deleted", topic);
            json.writeEndObject();
        });
    }

    /** Body: {@code {"retentionMillis":86400000}} and/or {@code "retentionBytes"}; a field left out keeps its value. */
    static FullHttpResponse alterTopic(ByteBufAllocator alloc, Broker broker, String topic, FullHttpRequest request) {
        JsonNode body = body(request, ALTER_FIELDS, "{\"retentionMillis\":86400000,\"retentionBytes\":-1}");
        TopicDescription current = broker.describeTopic(topic);
        long millis = longField(body, "retentionMillis", current.config().retentionMillis());
        long bytes = longField(body, "retentionBytes", current.config().retentionBytes());
        TopicDescription altered = broker.alterTopic(topic, millis, bytes);
        return TopicEndpoints.describeResponse(alloc, altered);
    }

    private static JsonNode body(FullHttpRequest request, Set<String> fields, String example) {
        if (request.content().readableBytes() > MAX_BODY_BYTES) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "body larger than " + MAX_BODY_BYTES + " bytes");
        }
        JsonNode body;
        try {
            body = MAPPER.readTree(new ByteBufInputStream(request.content().duplicate()));
        } catch (IOException e) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "body is not JSON: "
                    + (e instanceof com.fasterxml.jackson.core.JsonProcessingException jp ? jp.getOriginalMessage() : e.getMessage()));
        }
        if (body == null || !body.isObject()) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "body must be a JSON object like " + example);
        }
        body.fieldNames().forEachRemaining(f -> {
            if (!fields.contains(f)) {
                throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "unknown field '" + f + "'; expected " + fields);
            }
        });
        return body;
    }

    private static long longField(JsonNode body, String field, long absent) {
        JsonNode v = body.get(field);
        if (v == null) {
            return absent;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw InvalidConfigException.of(field, v, "must be an integer");
        }
        return v.longValue();
    }

    static void write(JsonGenerator json, GroupStatus g) throws IOException {
        json.writeStartObject();
        json.writeStringField("group", g.groupId());
        json.writeStringField("topic", g.topic());
        json.writeStringField("state", g.state());
        json.writeNumberField("generation", g.generation());
        json.writeNumberField("lag", g.totalLag());
        json.writeArrayFieldStart("members");
        for (var m : g.members().entrySet()) {
            json.writeStartObject();
            json.writeStringField("member", m.getKey());
            json.writeArrayFieldStart("partitions");
            for (TopicPartition tp : new java.util.TreeSet<>(m.getValue())) {
                json.writeNumber(tp.partition());
            }
            json.writeEndArray();
            json.writeEndObject();
        }
        json.writeEndArray();
        json.writeArrayFieldStart("partitions");
        for (GroupStatus.PartitionLag p : g.partitions()) {
            json.writeStartObject();
            json.writeStringField("topic", p.topic());
            json.writeNumberField("partition", p.partition());
            json.writeNumberField("committed", p.committed());
            json.writeNumberField("startOffset", p.startOffset());
            json.writeNumberField("endOffset", p.endOffset());
            json.writeNumberField("lag", p.lag());
            json.writeStringField("member", p.member());
            json.writeEndObject();
        }
        json.writeEndArray();
        json.writeEndObject();
    }
}
