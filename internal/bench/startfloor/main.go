// Command startfloor links the packages of the four modules cairn's users
// fixed (aws-sdk-go-v2, minio-go, blake3, klauspost/compress) that the
// cairn CLI links, and does nothing else: its start-up, the runtime's and
// those packages' initialisers, is the least any cairn binary can start
// in. The benchmark times it beside `cairn version` and `cairn commit`
// (target 7); TestStartFloorLinksTheFixedPackages keeps its imports
// those of the CLI.
package main

import (
	_ "github.com/aws/aws-sdk-go-v2/aws"
	_ "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	_ "github.com/aws/aws-sdk-go-v2/config"
	_ "github.com/aws/aws-sdk-go-v2/service/s3"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/minio/minio-go/v7"
	_ "github.com/minio/minio-go/v7/pkg/credentials"
	_ "github.com/minio/minio-go/v7/pkg/s3utils"
	_ "github.com/zeebo/blake3"
)

func main() {}
