import type { FastifyReply } from 'fastify';
import { ApiError, INTERNAL_ERROR_BODY, wireText } from '../errors.ts';
import { JsonText, REPLY_SENT } from '../route.ts';

/**
 * Step 10: a handler's result becomes the reply: a value is 200 JSON (pre-serialised `JsonText` as it is),
 * `undefined` is 204, and a handler that wrote the reply itself (`REPLY_SENT`) is left alone.
 */
export function respond(reply: FastifyReply, result: unknown): FastifyReply {
  if (result === REPLY_SENT || reply.sent) return reply;
  if (result === undefined) return reply.code(204).send();
  const json = result instanceof JsonText ? result.text : JSON.stringify(result);
  return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(json);
}

/** The one way an `ApiError` goes out: its headers, its status and `toWireBody`'s text (docs/conventions.md#errors). */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const name in error.headers) reply.header(name, error.headers[name]);
  return reply.code(error.status).header('content-type', 'application/json; charset=utf-8').send(wireText(error));
}

/**
 * What an error that escaped the steps maps to: an `ApiError` as it is, Fastify's body-size and media-type
 * refusals and other 4xx onto the catalogue; anything else (undefined) is the generic 500.
 */
export function catalogueErrorFor(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  const fastifyCode = (error as { code?: string }).code;
  if (fastifyCode === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('PAYLOAD_TOO_LARGE');
  if (fastifyCode === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError('UNSUPPORTED_MEDIA_TYPE');
  const status = (error as { statusCode?: number }).statusCode;
  if (status && status >= 400 && status < 500) return new ApiError('BAD_REQUEST');
  return undefined;
}

/** The generic 500: no detail on the wire (it goes to the log). */
export function sendInternalError(reply: FastifyReply): FastifyReply {
  return reply.code(500).header('content-type', 'application/json; charset=utf-8').send(INTERNAL_ERROR_BODY);
}
