/**
 * The user data stream's endpoints on the futures host: the listen key REST
 * routes (USER_STREAM, weight 1 each, counted in the host's IP weight like
 * every other route) and the WebSocket paths, routed `/private/...` and the
 * decommissioned unrouted `/ws/...`, `/stream` (which open and stay silent
 * for user data, as the venue's have since 2026-04-23). See user_stream.ts
 * for the facts and their sources.
 */
import { Hono } from "hono";
import type { RouteSpec } from "./route.ts";
import { eventFilter, type StreamRequest, type UserStreams } from "./user_stream.ts";

const LISTEN_KEY_PATH = "/fapi/v1/listenKey";

export function listenKeyRoutes(streams: UserStreams): RouteSpec[] {
  return [
    {
      method: "POST",
      path: LISTEN_KEY_PATH,
      weight: 1,
      security: "USER_STREAM",
      handle: ({ account }) => streams.start(account),
    },
    {
      method: "PUT",
      path: LISTEN_KEY_PATH,
      weight: 1,
      security: "USER_STREAM",
      handle: ({ account }) => streams.keepAlive(account),
    },
    {
      method: "DELETE",
      path: LISTEN_KEY_PATH,
      weight: 1,
      security: "USER_STREAM",
      handle: ({ account }) => streams.stop(account),
    },
  ];
}

/**
 * `listenKey=K1&events=A/B&listenKey=K2&events=C` pairs, each `events` naming
 * what the key before it asks for; `streams=K1/K2` (the generic `stream`
 * mode) asks for every event of each.
 */
function streamsOf(query: URLSearchParams): StreamRequest["streams"] {
  const streams: StreamRequest["streams"] = [];
  for (const [name, value] of query) {
    if (name === "listenKey" && value) streams.push([value, null]);
    else if (name === "events" && streams.length > 0) streams[streams.length - 1][1] = eventFilter(value);
    else if (name === "streams") { for (const key of value.split("/").filter(Boolean)) streams.push([key, null]); }
  }
  return streams;
}

/** The WebSocket paths, mounted on the futures host beside `/fapi`. */
export function streamRoutes(streams: UserStreams): Hono {
  const app = new Hono();
  app.get("/private/ws/:listenKey", (c) =>
    streams.accept(c.req.raw, {
      path: "/private/ws",
      routed: true,
      combined: false,
      streams: [[c.req.param("listenKey"), null]],
    }));
  app.get("/private/ws", (c) =>
    streams.accept(c.req.raw, {
      path: "/private/ws",
      routed: true,
      combined: false,
      streams: streamsOf(new URL(c.req.url).searchParams),
    }));
  app.get("/private/stream", (c) =>
    streams.accept(c.req.raw, {
      path: "/private/stream",
      routed: true,
      combined: true,
      streams: streamsOf(new URL(c.req.url).searchParams),
    }));
  // Unrouted (legacy) paths: the venue still completes the handshake but pushes no user data on them.
  app.get("/ws/*", (c) => streams.accept(c.req.raw, { path: "/ws", routed: false, combined: false, streams: [] }));
  app.get("/stream", (c) => streams.accept(c.req.raw, { path: "/stream", routed: false, combined: true, streams: [] }));
  return app;
}
