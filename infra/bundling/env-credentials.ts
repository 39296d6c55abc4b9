import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` inside the AWS SDK layer (see infra/bundling/sdk-layer.ts).
 *
 * The SDK's default chain tries environment variables, then SSO, INI profiles, web identity, ECS and EC2
 * metadata, and bundles an STS and an SSO client to do so: about 130 KB, parsed on every cold start. A Lambda
 * function always receives its role's credentials as environment variables (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), so the first link of the chain is the only one that can answer.
 * Local runs and the tests do not use the layer and keep the full chain.
 */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]): ReturnType<typeof fromEnv> => fromEnv(init);
