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
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicDescription;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code GET /v1/topics}, {@code GET /v1/topics/{topic}} and {@code POST /v1/topics}. Stateless. */
final class TopicEndpoints {
    /** A topic-creation body is a few fields; anything larger is not one. */
    static final int MAX_CREATE_BODY_BYTES = 64 * 1024;
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Set<String> CREATE_FIELDS = Set.of("name", "partitions", "retentionMillis", "retentionBytes", "journaled");

    private TopicEndpoints() {
    }

    static FullHttpResponse list(ByteBufAllocator alloc, Broker broker) {
        List<TopicDescription> topics = new ArrayList<>();
        for (String name : broker.listTopics()) {
            try {
                topics.add(broker.describeTopic(name));
            } catch (SluiceException.UnknownTopicException deletedMeanwhile) {
                // deleted between list and describe: it is simply not listed
            }
        }
        return JsonResponses.json(alloc, HttpResponseStatus.OK, json -> {
            json.writeStartObject();
            json.writeArrayFieldStart("topics");
            for (TopicDescription t : topics) {
                write(json, t);
            }
            json.writeEndArray();
            json.writeEndObject();
        });
    }

    static FullHttpResponse describe(ByteBufAllocator alloc, Broker broker, String topic) {
        TopicDescription description = broker.describeTopic(topic);
        return JsonResponses.json(alloc, HttpResponseStatus.OK, json -> write(json, description));
    }

    /**
     * Parses a creation body: {@code {"name":"orders","partitions":4}} plus optional retentionMillis, retentionBytes,
     * journaled. Cheap (at most {@link #MAX_CREATE_BODY_BYTES}); the creation itself runs off the event loop.
     */
    static TopicConfig parseCreate(FullHttpRequest request) {
        if (request.content().readableBytes() > MAX_CREATE_BODY_BYTES) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "topic creation body larger than " + MAX_CREATE_BODY_BYTES + " bytes");
        }
        JsonNode body;
        try {
            body = MAPPER.readTree(new ByteBufInputStream(request.content().duplicate()));
        } catch (IOException e) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "body is not JSON: "
                    + (e instanceof com.fasterxml.jackson.core.JsonProcessingException jp ? jp.getOriginalMessage() : e.getMessage()));
        }
        if (body == null || !body.isObject()) {
            throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "body must be a JSON object like {\"name\":\"orders\",\"partitions\":4}");
        }
        body.fieldNames().forEachRemaining(f -> {
            if (!CREATE_FIELDS.contains(f)) {
                throw new SluiceException(SluiceException.Code.INVALID_REQUEST, "unknown field '" + f + "'; expected " + CREATE_FIELDS);
            }
        });
        JsonNode name = body.get("name");
        if (name == null || !name.isTextual()) {
            throw InvalidConfigException.of("name", name, "must be a string");
        }
        TopicConfig.Builder config = TopicConfig.builder(name.asText())
                .partitions(intField(body, "partitions", 1))
                .retentionMillis(longField(body, "retentionMillis", -1))
                .retentionBytes(longField(body, "retentionBytes", -1));
        JsonNode journaled = body.get("journaled");
        if (journaled != null) {
            if (!journaled.isBoolean()) {
                throw InvalidConfigException.of("journaled", journaled, "must be true or false");
            }
            config.journaled(journaled.booleanValue());
        }
        return config.build();
    }

    /** {@code 201} with the new topic's description. */
    static FullHttpResponse created(ByteBufAllocator alloc, TopicDescription created) {
        return JsonResponses.json(alloc, HttpResponseStatus.CREATED, json -> write(json, created));
    }

    private static int intField(JsonNode body, String field, int absent) {
        JsonNode v = body.get(field);
        if (v == null) {
            return absent;
        }
        if (!v.isInt()) {
            throw InvalidConfigException.of(field, v, "must be an integer");
        }
        return v.intValue();
    }

    private static long longField(JsonNode body, String field, long absent) {
        JsonNode v = body.get(field);
        if (v == null) {
            return absent;
        }
        if (!v.canConvertToLong() || !v.isIntegralNumber()) {
            throw InvalidConfigException.of(field, v, "must be an integer");
        }
        return v.longValue();
    }

    private static void write(JsonGenerator json, TopicDescription t) throws IOException {
        TopicConfig c = t.config();
        json.writeStartObject();
        json.writeStringField("name", c.name());
        json.writeNumberField("partitionCount", c.partitions());
        json.writeBooleanField("journaled", c.journaled());
        json.writeNumberField("retentionMillis", c.retentionMillis());
        json.writeNumberField("retentionBytes", c.retentionBytes());
        json.writeArrayFieldStart("partitions");
        for (TopicDescription.PartitionInfo p : t.partitions()) {
            json.writeStartObject();
            json.writeNumberField("partition", p.partition());
            json.writeNumberField("startOffset", p.startOffset());
            json.writeNumberField("endOffset", p.endOffset());
            json.writeNumberField("journalBytes", p.journalBytes());
            json.writeEndObject();
        }
        json.writeEndArray();
        json.writeEndObject();
    }
}
