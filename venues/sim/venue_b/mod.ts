/**
 * Protocol-faithful simulator of VENUE_B (Hyperliquid-style perps DEX).
 * @module
 */
export { createVenueBSimulator, type VenueBSimulatorOptions } from "./app.ts";
