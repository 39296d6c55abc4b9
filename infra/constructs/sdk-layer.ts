import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Architecture, Code, LayerVersion, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { REPO_ROOT, SDK_LAYER_FOLDER } from '../bundling/options.js';
import { buildSdkLayer } from '../bundling/sdk-layer.js';
import { bundledLocally } from './local-bundling.js';

const ID = 'AwsSdkLayer';

/**
 * The AWS SDK layer (infra/bundling/sdk-layer.ts) of a stack: one LayerVersion per stack, shared by all its
 * functions. Its files are built at synth, like the functions' bundles; stacks with the same SDK share one upload,
 * and a change of the SDK (a new name imported, a version bump) publishes a new layer version that the functions
 * switch to in the same deploy.
 */
export function sdkLayer(scope: Construct): LayerVersion {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild(ID);
  if (existing) return existing as LayerVersion;
  return new LayerVersion(stack, ID, {
    description: 'AWS SDK v3 clients, pinned by the lock file, minified and tree-shaken to what the functions import',
    compatibleRuntimes: [Runtime.NODEJS_22_X],
    compatibleArchitectures: [Architecture.ARM_64],
    code: Code.fromAsset(REPO_ROOT, bundledLocally({ layer: SDK_LAYER_FOLDER }, (outputDir) => {
      buildSdkLayer(join(outputDir, SDK_LAYER_FOLDER));
    })),
  });
}
