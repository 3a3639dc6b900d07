import { loadClientConnectConfig, type ClientConnectConfig } from '@temporalio/envconfig';
import type { RatchetConfig } from '../config.js';

/** What a Temporal connection needs beyond its address to reach Temporal Cloud or a TLS-terminated server. */
export type TemporalSecurity = Pick<ClientConnectConfig['connectionOptions'], 'tls' | 'apiKey' | 'metadata'>;

/**
 * TLS, API key and gRPC metadata from Temporal's own environment configuration (`@temporalio/envconfig`, the same
 * rules the Python package reads with `temporalio.envconfig`): TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH and
 * _KEY_PATH (mTLS), TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_PROFILE and its TOML
 * file. Ratchet's own settings win where both speak (an API key read from TEMPORAL_API_KEY_FILE, say).
 */
export function temporalSecurity(settings: RatchetConfig['temporal'], env: NodeJS.ProcessEnv = process.env): TemporalSecurity {
  const defined = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
  const { connectionOptions } = loadClientConnectConfig({ overrideEnvVars: defined });
  const tls = connectionOptions.tls ?? (settings.tls || undefined);
  const apiKey = settings.apiKey ?? connectionOptions.apiKey;
  const metadata = connectionOptions.metadata;
  return {
    ...(tls === undefined ? {} : { tls }),
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(metadata && Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}
