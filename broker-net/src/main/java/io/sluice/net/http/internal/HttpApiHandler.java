package io.sluice.net.http.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.codec.compression.DecompressionException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.sluice.core.Acks;
import io.sluice.core.ProducerRecord;
import io.sluice.core.SluiceException;
import io.sluice.core.SluiceException.Code;
import io.sluice.net.metrics.MetricsRegistry;
import io.sluice.net.security.TokenAuthenticator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Routes the requests of one connection, one at a time and answered in order (HTTP/1.1 pipelining): while a request
 * is in progress, further complete requests wait in a queue of at most {@code http.max.pipelined.requests} and the
 * connection stops reading. Runs on the connection's event loop only.
 */
public final class HttpApiHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApiHandler.class);
    private static final String TOPICS = "/v1/topics";
    private static final String EVENTS_SUFFIX = "/events";
    private static final String GROUPS = "/v1/groups";
    private static final String RESET_SUFFIX = "/reset-offsets";
    private static final Set<String> PRODUCE_PARAMS = Set.of("acks", "key");

    private final HttpApi api;
    private final ConnectionGuard guard;
    private final ArrayDeque<FullHttpRequest> queued = new ArrayDeque<>();
    private boolean busy;
    /** The last request URI of this connection and its decoder (which decodes path and query once each, lazily). */
    private String lastUri;
    private QueryStringDecoder lastDecoded;

    public HttpApiHandler(HttpApi api, ConnectionGuard guard) {
        this.api = api;
        this.guard = guard;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (busy) {
            if (queued.size() >= api.config.maxPipelinedRequests()) {
                request.release();
                LOG.info("closing HTTP connection {}: more than {} pipelined requests (http.max.pipelined.requests)",
                        ctx.channel().remoteAddress(), api.config.maxPipelinedRequests());
                ctx.close();
                return;
            }
            queued.add(request);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        handle(ctx, request);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        FullHttpRequest r;
        while ((r = queued.poll()) != null) {
            r.release();
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof DecompressionException || cause.getCause() instanceof DecompressionException) {
            // a compressed body that inflates past http.max.body.bytes, or is not valid gzip/deflate
            api.metrics.request("inflate", 413);
            FullHttpResponse response = JsonResponses.error(ctx.alloc(), HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    Code.RECORD_TOO_LARGE, "compressed body could not be inflated within " + api.config.maxBodyBytes()
                            + " bytes (http.max.body.bytes): " + cause.getMessage());
            response.headers().set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        // Peers resetting connections is routine; anything reaching here closes just this connection.
        LOG.debug("closing HTTP connection {} after an error", ctx.channel().remoteAddress(), cause);
        ctx.close();
    }

    private void handle(ChannelHandlerContext ctx, FullHttpRequest request) {
        busy = true;
        guard.requestReceived(ctx);
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        Exchange exchange = new Exchange(ctx, keepAlive);
        try {
            route(exchange, request);
        } catch (SluiceException e) {
            exchange.error(JsonResponses.statusOf(e.code()), e.code(), e.getMessage());
        } catch (IllegalArgumentException e) {
            // QueryStringDecoder's verdict on bad percent-encoding in the path or query
            exchange.error(HttpResponseStatus.BAD_REQUEST, Code.INVALID_REQUEST, "malformed request URI: " + e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("HTTP {} {} failed", request.method(), exchange.route, e);
            exchange.error(HttpResponseStatus.INTERNAL_SERVER_ERROR, Code.UNKNOWN, "internal error: " + e);
        } finally {
            request.release();
        }
    }

    private void route(Exchange ex, FullHttpRequest request) {
        api.metrics.bodyBytes.add(request.content().readableBytes());
        if (!request.decoderResult().isSuccess()) {
            ex.route = "malformed";
            ex.keepAlive = false;
            Throwable cause = request.decoderResult().cause();
            HttpResponseStatus status = cause instanceof TooLongHttpHeaderException ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
                    : cause instanceof TooLongHttpLineException ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                    : HttpResponseStatus.BAD_REQUEST;
            ex.error(status, Code.INVALID_REQUEST, "malformed HTTP request: " + cause.getMessage());
            return;
        }
        if (api.closing()) {
            ex.keepAlive = false;
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, Code.CLOSED, "the broker is shutting down");
            return;
        }
        QueryStringDecoder uri = decode(request.uri());
        String path = uri.path();
        HttpMethod method = request.method();
        if (request.headers().contains(AuthGate.REFUSED)) {
            // the gate found no valid token on the headers and dropped the body: answer in order, then close
            ex.route = path.equals("/health") ? "health" : routeName(path);
            refuse(ex);
            return;
        }
        if (path.equals("/health")) {
            ex.route = "health";
            if (allow(ex, method, HttpMethod.GET)) {
                health(ex);
            }
            return;
        }
        ex.route = routeName(path);
        if (ex.route.equals("ui") && uri.parameters().containsKey("token")) {
            StatusPage.login(ex.ctx.alloc(), api.config.auth(), uri.parameters().get("token").get(0), ex::send);
            return;
        }
        if (!authenticated(ex, request)) {
            return;
        }
        switch (ex.route) {
            case "ui" -> {
                if (allow(ex, method, HttpMethod.GET)) {
                    ex.send(StatusPage.page(ex.ctx.alloc()));
                }
            }
            case "metrics" -> {
                if (allow(ex, method, HttpMethod.GET)) {
                    metrics(ex, request);
                }
            }
            case "topics" -> {
                if (method.equals(HttpMethod.GET)) {
                    ex.send(TopicEndpoints.list(ex.ctx.alloc(), api.broker));
                } else if (allow(ex, method, HttpMethod.POST)) {
                    createTopic(ex, TopicEndpoints.parseCreate(request));
                }
            }
            case "topic" -> {
                String topic = path.substring(TOPICS.length() + 1);
                if (method.equals(HttpMethod.DELETE)) {
                    ex.send(GroupEndpoints.deleteTopic(ex.ctx.alloc(), api.broker, topic));
                } else if (method.equals(HttpMethod.PATCH)) {
                    ex.send(GroupEndpoints.alterTopic(ex.ctx.alloc(), api.broker, topic, request));
                } else if (allow(ex, method, HttpMethod.GET)) {
                    ex.send(TopicEndpoints.describe(ex.ctx.alloc(), api.broker, topic));
                }
            }
            case "groups" -> {
                if (allow(ex, method, HttpMethod.GET)) {
                    ex.send(GroupEndpoints.list(ex.ctx.alloc(), api.broker));
                }
            }
            case "group" -> {
                if (allow(ex, method, HttpMethod.GET)) {
                    ex.send(GroupEndpoints.describe(ex.ctx.alloc(), api.broker, path.substring(GROUPS.length() + 1)));
                }
            }
            case "reset-offsets" -> {
                if (allow(ex, method, HttpMethod.POST)) {
                    String group = path.substring(GROUPS.length() + 1, path.length() - RESET_SUFFIX.length());
                    ex.send(GroupEndpoints.reset(ex.ctx.alloc(), api.broker, group, request));
                }
            }
            case "produce" -> {
                if (allow(ex, method, HttpMethod.POST)) {
                    String topic = path.substring(TOPICS.length() + 1, path.length() - EVENTS_SUFFIX.length());
                    ex.contentEncoding = request.headers().get(HttpHeaderNames.CONTENT_ENCODING); // left only if not inflated
                    produce(ex, topic, uri.parameters(), request.content());
                }
            }
            default -> ex.error(HttpResponseStatus.NOT_FOUND, Code.INVALID_REQUEST, "no such endpoint: " + path);
        }
    }

    /**
     * Creates the topic on the admin thread (it creates directories and files: never on an I/O event loop) and
     * answers from the event loop when done; later requests on this connection wait for it, in order.
     */
    private void createTopic(Exchange ex, io.sluice.core.TopicConfig config) {
        try {
            api.admin.execute(() -> {
                FullHttpResponse response;
                try {
                    response = TopicEndpoints.created(ex.ctx.alloc(), api.broker.createTopic(config));
                } catch (SluiceException e) {
                    response = JsonResponses.error(ex.ctx.alloc(), JsonResponses.statusOf(e.code()), e.code(), e.getMessage());
                } catch (RuntimeException | Error e) {
                    LOG.error("HTTP topic creation of '{}' failed", config.name(), e);
                    response = JsonResponses.error(ex.ctx.alloc(), HttpResponseStatus.INTERNAL_SERVER_ERROR, Code.UNKNOWN,
                            "internal error: " + e);
                }
                FullHttpResponse answer = response;
                ex.ctx.executor().execute(() -> ex.send(answer));
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            ex.error(HttpResponseStatus.SERVICE_UNAVAILABLE, Code.BACK_PRESSURED,
                    "too many topic creations waiting (" + HttpApi.MAX_ADMIN_QUEUE + "), or the server is closing; retry later");
        }
    }

    /**
     * The decoder of {@code uri}, reused while a connection sends the same URI again (a client posting one event per
     * request to one topic does): decoding it is then paid once per connection, not once per request. Decoding errors
     * are not cached; they surface, as before, when the path or the parameters are first asked for.
     */
    private QueryStringDecoder decode(String uri) {
        if (!uri.equals(lastUri)) {
            lastDecoded = new QueryStringDecoder(uri);
            lastUri = uri;
        }
        return lastDecoded;
    }

    private static String routeName(String path) {
        if (path.equals("/metrics")) {
            return "metrics";
        }
        if (path.equals(StatusPage.PATH) || path.equals(StatusPage.PATH + "/")) {
            return "ui";
        }
        if (path.equals(TOPICS)) {
            return "topics";
        }
        if (path.equals(GROUPS)) {
            return "groups";
        }
        if (path.startsWith(GROUPS + "/") && path.length() > GROUPS.length() + 1) {
            String rest = path.substring(GROUPS.length() + 1);
            int slash = rest.indexOf('/');
            if (slash < 0) {
                return "group";
            }
            if (slash > 0 && rest.substring(slash).equals(RESET_SUFFIX)) {
                return "reset-offsets";
            }
        }
        if (path.startsWith(TOPICS + "/") && path.length() > TOPICS.length() + 1) {
            String rest = path.substring(TOPICS.length() + 1);
            int slash = rest.indexOf('/');
            if (slash < 0) {
                return "topic";
            }
            if (slash > 0 && rest.substring(slash).equals(EVENTS_SUFFIX)) {
                return "produce";
            }
        }
        return "unknown";
    }

    private boolean authenticated(Exchange ex, FullHttpRequest request) {
        TokenAuthenticator auth = api.config.auth();
        if (auth == null || auth.authenticateBearer(request.headers().get(HttpHeaderNames.AUTHORIZATION))
                || StatusPage.hasSessionCookie(auth, request)) {
            return true;
        }
        refuse(ex);
        return false;
    }

    /** {@code 401}, counted, and the connection closed: a client without the token gets nothing more from it. */
    private void refuse(Exchange ex) {
        api.metrics.authFailures.increment();
        long refused = api.metrics.authFailures.sum();
        if (Long.bitCount(refused) == 1) { // 1st, 2nd, 4th...: a flood of bad clients cannot flood the log
            LOG.info("closing HTTP connection {}: missing or invalid bearer token on {} ({} refused so far)",
                    ex.ctx.channel().remoteAddress(), ex.route, refused);
        }
        ex.keepAlive = false;
        FullHttpResponse response = JsonResponses.error(ex.ctx.alloc(), HttpResponseStatus.UNAUTHORIZED,
                Code.AUTHENTICATION_FAILED, "missing or invalid bearer token (Authorization: Bearer <token>)");
        response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"sluice\"");
        ex.send(response);
    }

    private static boolean allow(Exchange ex, HttpMethod actual, HttpMethod allowed) {
        if (actual.equals(allowed)) {
            return true;
        }
        FullHttpResponse response = JsonResponses.error(ex.ctx.alloc(), HttpResponseStatus.METHOD_NOT_ALLOWED,
                Code.INVALID_REQUEST, actual + " is not allowed here; use " + allowed);
        response.headers().set(HttpHeaderNames.ALLOW, allowed.name());
        ex.send(response);
        return false;
    }

    /**
     * 200 {@code {"status":"ok"}} while the broker is open and every registered component is healthy; otherwise 503
     * with {@code "status":"closed"} or {@code "failing"}. Registered components (ingest pipelines) are listed under
     * {@code "components"} with their details (state, reason, guarantee).
     */
    private void health(Exchange ex) {
        boolean open = !api.broker.isClosed();
        Map<String, io.sluice.net.http.HealthRegistry.Health> components = api.health == null ? Map.of() : api.health.get();
        boolean healthy = components.values().stream().allMatch(io.sluice.net.http.HealthRegistry.Health::healthy);
        boolean up = open && healthy;
        ex.send(JsonResponses.json(ex.ctx.alloc(), up ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE, json -> {
            json.writeStartObject();
            json.writeStringField("status", !open ? "closed" : healthy ? "ok" : "failing");
            if (!components.isEmpty()) {
                json.writeObjectFieldStart("components");
                for (Map.Entry<String, io.sluice.net.http.HealthRegistry.Health> c : components.entrySet()) {
                    json.writeObjectFieldStart(c.getKey());
                    json.writeBooleanField("healthy", c.getValue().healthy());
                    for (Map.Entry<String, String> d : new java.util.TreeMap<>(c.getValue().details()).entrySet()) {
                        json.writeStringField(d.getKey(), d.getValue());
                    }
                    json.writeEndObject();
                }
                json.writeEndObject();
            }
            json.writeEndObject();
        }));
    }

    private void metrics(Exchange ex, FullHttpRequest request) {
        MetricsRegistry.Scrape scrape = api.registry.scrape(request.headers().get(HttpHeaderNames.ACCEPT));
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, Unpooled.wrappedBuffer(scrape.body()));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, scrape.contentType());
        ex.send(response);
    }

    private void produce(Exchange ex, String topic, Map<String, List<String>> params, ByteBuf content) {
        for (Map.Entry<String, List<String>> p : params.entrySet()) {
            if (!PRODUCE_PARAMS.contains(p.getKey())) {
                ex.error(HttpResponseStatus.BAD_REQUEST, Code.INVALID_REQUEST, "unknown query parameter '" + p.getKey() + "'; expected acks and key");
                return;
            }
            if (p.getValue().size() != 1 || p.getValue().get(0).isEmpty()) {
                ex.error(HttpResponseStatus.BAD_REQUEST, Code.INVALID_REQUEST, "query parameter '" + p.getKey() + "' must be given once, with a value");
                return;
            }
        }
        Acks acks;
        try {
            acks = params.containsKey("acks") ? Acks.parse(params.get("acks").get(0)) : Acks.JOURNAL;
        } catch (IllegalArgumentException e) {
            ex.error(HttpResponseStatus.BAD_REQUEST, Code.INVALID_REQUEST, e.getMessage());
            return;
        }
        String keyField = params.containsKey("key") ? params.get("key").get(0) : null;
        String encoding = ex.contentEncoding;
        if (encoding != null && !encoding.isEmpty() && !encoding.equalsIgnoreCase("identity")) {
            ex.error(HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE, Code.INVALID_REQUEST,
                    "Content-Encoding '" + encoding + "' is not supported; use gzip, deflate or none");
            return;
        }
        api.broker.partitionCount(topic); // UnknownTopicException → 404 before the body is looked at

        byte[] body;
        int from;
        int to;
        if (content.hasArray()) {
            body = content.array();
            from = content.arrayOffset() + content.readerIndex();
        } else {
            body = ByteBufUtil.getBytes(content);
            from = 0;
        }
        to = from + content.readableBytes();
        NdjsonValidator.Result result = api.validator.validate(body, from, to, keyField);
        if (result instanceof NdjsonValidator.Rejection r) {
            ex.error(HttpResponseStatus.BAD_REQUEST, Code.INVALID_REQUEST, r.message(), r.line());
            return;
        }
        NdjsonValidator.Events events = (NdjsonValidator.Events) result;
        int maxEventSize = api.broker.config().maxEventSize();
        ProducerRecord[] records = new ProducerRecord[events.count()];
        int[] lines = new int[events.count()];
        for (int i = 0; i < records.length; i++) {
            ProducerRecord record = new ProducerRecord(topic, null, events.key(i),
                    Arrays.copyOfRange(body, events.start(i), events.end(i)), List.of(), ProducerRecord.NO_TIMESTAMP);
            if (record.serializedSize() > maxEventSize) {
                ex.error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, Code.RECORD_TOO_LARGE, "line " + events.line(i)
                        + ": event of " + record.serializedSize() + " bytes is larger than the broker's maxEventSize "
                        + maxEventSize, events.line(i));
                return;
            }
            records[i] = record;
            lines[i] = events.line(i);
        }
        new ProduceRequest(api, ex.ctx, api.producer(acks), acks == Acks.JOURNAL, records, lines, ex::send).start();
    }

    /** One request being answered: where, whether the connection stays open, and the route for the counters. */
    private final class Exchange {
        final ChannelHandlerContext ctx;
        boolean keepAlive;
        String route = "unknown";
        String contentEncoding;

        Exchange(ChannelHandlerContext ctx, boolean keepAlive) {
            this.ctx = ctx;
            this.keepAlive = keepAlive;
        }

        void error(HttpResponseStatus status, Code code, String message) {
            send(JsonResponses.error(ctx.alloc(), status, code, message));
        }

        void error(HttpResponseStatus status, Code code, String message, int line) {
            send(JsonResponses.error(ctx.alloc(), status, code, message, line));
        }

        /** Writes the response and moves on to the next queued request. Event loop only. */
        void send(FullHttpResponse response) {
            api.metrics.request(route, response.status().code());
            response.headers().set(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
            if (response.status().equals(HttpResponseStatus.SERVICE_UNAVAILABLE) && !response.headers().contains(HttpHeaderNames.RETRY_AFTER)) {
                response.headers().set(HttpHeaderNames.RETRY_AFTER, "1");
            }
            if (keepAlive) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                ctx.writeAndFlush(response);
            } else {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            }
            FullHttpRequest next = keepAlive ? queued.poll() : null;
            busy = next != null; // stays busy until the queued request is handled, so order is kept
            guard.responseSent(ctx, next != null);
            if (next != null) {
                ctx.executor().execute(() -> handle(ctx, next));
            } else if (keepAlive) {
                ctx.channel().config().setAutoRead(true);
            }
        }
    }
}
