import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in every function's bundle (the `alias` of
 * LAMBDA_ESBUILD_OPTIONS in ./options.ts).
 *
 * The SDK's default chain tries environment variables, then SSO, INI profiles, web identity, ECS and EC2
 * metadata, and bundles an STS and an SSO client to do so: about 130 KB, parsed on every cold start. A Lambda
 * function always receives its role's credentials as environment variables (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), so the first link of the chain is the only one that can answer.
 * Local runs and the tests run from source, not from the bundles, and keep the full chain.
 */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]): ReturnType<typeof fromEnv> => fromEnv(init);
