"""The repository's tests as a regular package, so ``tests.*`` resolves here and not to the unrelated top-level
``tests`` package that the mmsegmentation 1.2.2 wheel installs into site-packages."""
