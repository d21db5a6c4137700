/**
 * WebAuthn ceremonies from the server's JSON options (base64url strings, the @simplewebauthn shape) to the
 * browser API and back. Written out rather than relying on `parseRequestOptionsFromJSON`, which not every
 * supported browser has yet.
 */

import { fromBase64Url } from './base64url.ts';

type Json = Record<string, unknown>;

function toBase64Url(buffer: ArrayBuffer | null | undefined): string | undefined {
  if (!buffer) return undefined;
  const bytes = new Uint8Array(buffer);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function descriptors(list: unknown): PublicKeyCredentialDescriptor[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return (list as Json[]).map((item) => ({
    type: 'public-key',
    id: fromBase64Url(item.id as string),
    transports: item.transports as AuthenticatorTransport[] | undefined,
  }));
}

/**
 * What a finished ceremony answers the server: the challenge and the credential as JSON, with `ceremonyFields`
 * giving the get or create response's own fields. No credential is NotAllowedError, as when the person cancels.
 */
function ceremonyResult<R extends AuthenticatorResponse>(
  credential: PublicKeyCredential | null,
  challenge: string,
  ceremonyFields: (response: R) => Json,
): { response: Json; challenge: string } {
  if (!credential) throw new DOMException('No credential', 'NotAllowedError');
  return {
    challenge,
    response: {
      id: credential.id,
      rawId: toBase64Url(credential.rawId),
      type: credential.type,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
      response: ceremonyFields(credential.response as R),
    },
  };
}

export function webauthnSupported(): boolean {
  return typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;
}

/** Runs `navigator.credentials.get` for request options; answers the JSON the server verifies. */
export async function getAssertion(options: unknown): Promise<{ response: Json; challenge: string }> {
  const json = options as Json;
  const publicKey: PublicKeyCredentialRequestOptions = {
    challenge: fromBase64Url(json.challenge as string),
    rpId: json.rpId as string | undefined,
    timeout: json.timeout as number | undefined,
    userVerification: json.userVerification as UserVerificationRequirement | undefined,
    allowCredentials: descriptors(json.allowCredentials),
  };
  const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
  return ceremonyResult(credential, json.challenge as string, (response: AuthenticatorAssertionResponse) => ({
    clientDataJSON: toBase64Url(response.clientDataJSON),
    authenticatorData: toBase64Url(response.authenticatorData),
    signature: toBase64Url(response.signature),
    userHandle: toBase64Url(response.userHandle),
  }));
}

/** Runs `navigator.credentials.create` for creation options (the settings pages add passkeys with it). */
export async function createCredential(options: unknown): Promise<{ response: Json; challenge: string }> {
  const json = options as Json;
  const user = json.user as Json;
  const publicKey: PublicKeyCredentialCreationOptions = {
    challenge: fromBase64Url(json.challenge as string),
    rp: json.rp as PublicKeyCredentialRpEntity,
    user: {
      id: fromBase64Url(user.id as string),
      name: user.name as string,
      displayName: user.displayName as string,
    },
    pubKeyCredParams: json.pubKeyCredParams as PublicKeyCredentialParameters[],
    timeout: json.timeout as number | undefined,
    attestation: json.attestation as AttestationConveyancePreference | undefined,
    authenticatorSelection: json.authenticatorSelection as AuthenticatorSelectionCriteria | undefined,
    excludeCredentials: descriptors(json.excludeCredentials),
  };
  const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential | null;
  return ceremonyResult(credential, json.challenge as string, (response: AuthenticatorAttestationResponse) => ({
    clientDataJSON: toBase64Url(response.clientDataJSON),
    attestationObject: toBase64Url(response.attestationObject),
    transports: response.getTransports?.() ?? [],
  }));
}
