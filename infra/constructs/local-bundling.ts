import { AssetHashType, type AssetOptions, DockerImage, type ILocalBundling } from 'aws-cdk-lib';

/**
 * Asset options that bundle on this machine, with the devDependencies (esbuild), never in Docker (not needed and
 * not available). `key` says what the asset is made from: CDK caches staged assets by their options, and functions
 * compare equal there (it drops functions), so without the key every asset would share the first one's output.
 * The asset is identified by its output, so an unchanged bundle is not uploaded again.
 */
export function bundledLocally(key: unknown, build: (outputDir: string) => void): AssetOptions {
  const local: ILocalBundling & { key: unknown } = {
    key,
    tryBundle(outputDir: string) {
      build(outputDir);
      return true;
    },
  };
  return {
    assetHashType: AssetHashType.OUTPUT,
    // Required by the type, never pulled: local bundling always succeeds or throws.
    bundling: { image: DockerImage.fromRegistry('public.ecr.aws/docker/library/node:22'), local },
  };
}
