import type { DomainError } from '@svc/core';
import type { Context } from 'koa';
import { PROBLEM_CONTENT_TYPE, problemOf, problemOfDomainError, STATUS_BY_CODE, type HttpErrorCode } from '../problem.js';

/** `Content-Type` of JSON answers, as Koa's `ctx.type = 'application/json'` writes it. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Status, `Content-Type` and a text body, in the order Koa's `ctx.status`, `ctx.type`
 * and `ctx.body` setters would set them, without their media-type lookup (the hot path
 * of every answer).
 */
export function send(ctx: Context, status: number, contentType: string, text: string): void {
  const response = ctx.response;
  response.status = status;
  ctx.res.setHeader('Content-Type', contentType);
  response.body = text;
}

/** Sends `body` as JSON with `status`. */
export function sendJson(ctx: Context, status: number, body: unknown): void {
  send(ctx, status, JSON_CONTENT_TYPE, JSON.stringify(body));
}

/**
 * Sends the RFC 9457 problem details of an adapter code, with the request's id.
 * Source: docs/CONTRACT.md "Envelope and errors".
 */
export function sendProblem(ctx: Context, code: HttpErrorCode, detail: string, errors?: DomainError['errors']): void {
  const body = problemOf(code, detail, { errors, requestId: ctx.state['requestId'] as string });
  send(ctx, body.status, PROBLEM_CONTENT_TYPE, JSON.stringify(body));
}

/**
 * Sends the problem details of a domain error, at the status of its code in
 * `STATUS_BY_CODE`, with `Retry-After` when the error says when to retry
 * (`retryAfterSeconds`: `idempotency_key_in_use`).
 */
export function sendError(ctx: Context, error: DomainError): void {
  if (error.retryAfterSeconds !== undefined) ctx.res.setHeader('Retry-After', String(error.retryAfterSeconds));
  send(ctx, STATUS_BY_CODE[error.code], PROBLEM_CONTENT_TYPE, JSON.stringify(problemOfDomainError(error, ctx.state['requestId'] as string)));
}
